# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward tiny-checkpoint``: build a deterministic tiny checkpoint in a published layout, offline.

    robo-reward tiny-checkpoint --layout robometer|roboreward|qwen3vl [--size tiny|mid|4b] OUT_DIR

The layouts and sizes are described in models/testing/tiny_checkpoints.py.
"""
import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.models.testing.tiny_checkpoints import LAYOUTS, SIZES, build_checkpoint


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward tiny-checkpoint",
                                     description="Deterministic tiny checkpoints in the published on-disk "
                                                 "layouts, built offline.")
    parser.add_argument("--layout", choices=LAYOUTS, required=True)
    parser.add_argument("--size", choices=SIZES, default="tiny")
    parser.add_argument("out_dir")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    print(build_checkpoint(args.layout, args.out_dir, args.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
