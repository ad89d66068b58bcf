# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
r"""``robo-reward lerobot DATASET``: score a local LeRobot dataset (v3) with the node's pipeline; optionally relabel it.

Each episode's camera key(s) are decoded from the dataset's mp4 files (PyAV) and go through the
same pipeline as ``replay``; the task text comes from the dataset's tasks. Writes the replay files
(``robo-reward eval`` reads them) and, with ``--relabel NEW_DIR``, a copy of the dataset with
per-frame columns ``robo_reward.progress``, ``.success_probability``, ``.reward``, ``.success`` and
``.terminal`` for LeRobot's training.

    robo-reward lerobot ~/datasets/pick_cube --camera-key observation.images.top --out scored \
        [--relabel ~/datasets/pick_cube_rewarded] [--model DIR] [-p NAME=VALUE ...]
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail, no_progress_bars
from robo_reward_ros.cli.model_args import add_model_arguments


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward lerobot", description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="a local LeRobot dataset folder (meta/info.json, data/, videos/)")
    parser.add_argument("--camera-key", action="append", default=[], metavar="KEY",
                        help="video feature to score (repeatable; default: every video key)")
    parser.add_argument("--episodes", type=int, nargs="+", help="episode indices (default: all)")
    parser.add_argument("--out", default="lerobot_scores", help="output folder (default ./lerobot_scores)")
    parser.add_argument("--relabel", default="", metavar="NEW_DIR",
                        help="write a copy of the dataset with the per-frame reward columns here")
    parser.add_argument("--relabel-fill", choices=("nan", "first", "zero"), default="nan",
                        help="the float columns before an episode's first estimate: NaN (default), "
                             "the first estimate held back to the start, or 0")
    add_model_arguments(parser)
    parser.add_argument("--force", action="store_true", help="score every episode again")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.quiet:
        no_progress_bars()
    from robo_reward_ros.replay.lerobot_run import run_lerobot
    try:
        summary = run_lerobot(args.dataset, args.out, args.camera_key or None, args.episodes, args.model,
                              args.backend, args.precision, args.device, args.param, args.relabel,
                              args.force, not args.no_plots, not args.quiet,
                              relabel_fill=args.relabel_fill)
    except (FileNotFoundError, FileExistsError, ValueError, RuntimeError) as exc:
        return fail("lerobot", exc)
    print(f"lerobot: {summary['episodes']} episode(s) ({summary['scored']} scored, {summary['reused']} "
          f"already scored), {summary['estimates']} estimates -> {summary['out']}/"
          + (f"; relabelled copy {summary['relabel']}" if args.relabel else "")
          + f"; model {summary['model']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
