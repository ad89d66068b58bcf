# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward render-layout``: draw a Foxglove layout's panels from an episode MCAP with matplotlib (a PNG).

A still of what Foxglove shows for ``replay --mcap`` output, where Foxglove itself is not at hand.

    robo-reward render-layout replay/mcap/EPISODE [--layout replay/mcap/foxglove_layout.json] [--at SEC] --out view.png
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward render-layout", description=__doc__.splitlines()[0])
    parser.add_argument("episode", help="an episode's MCAP folder written by replay --mcap")
    parser.add_argument("--layout", default="",
                        help="Foxglove layout JSON (default: foxglove_layout.json beside the episode)")
    parser.add_argument("--at", type=float, help="cursor time in seconds (default: first failure, else the end)")
    parser.add_argument("--out", required=True, help="PNG to write")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from robo_reward_ros.visualisation.layout_render import render_layout
    layout_path = args.layout or os.path.join(os.path.dirname(os.path.normpath(args.episode)),
                                              "foxglove_layout.json")
    try:
        with open(layout_path) as handle:
            layout = json.load(handle)
        render_layout(args.episode, layout, args.out, args.at, title=os.path.basename(os.path.normpath(args.episode)))
    except (OSError, ValueError, KeyError) as exc:
        return fail("render-layout", exc)
    print(f"render-layout: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
