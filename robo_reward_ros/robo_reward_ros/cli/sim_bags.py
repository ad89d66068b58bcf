# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward sim-bags OUT``: render Meta-World episodes offscreen into one ROS 2 bag per episode.

The episodes have scripted experts, fixed seeds and known outcomes; the bags are MCAP (layout in
recordings/episode_bag.py). No download: Meta-World ships its scenes and expert policies.

    robo-reward sim-bags OUT [--scenario NAME ...] [--steps 100] [--size 224] [--seeds 1]
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail


def build_parser() -> argparse.ArgumentParser:
    from robo_reward_ros.simulation.metaworld_episodes import SCENARIOS
    parser = argparse.ArgumentParser(
        prog="robo-reward sim-bags", description=__doc__.splitlines()[0],
        epilog="scenarios: " + ", ".join(s.name for s in SCENARIOS))
    parser.add_argument("out", help="folder for the bags (one sub-folder per episode)")
    parser.add_argument("--scenario", action="append", default=[],
                        help="scenario to render (repeatable; default: all)")
    parser.add_argument("--steps", type=int, default=100,
                        help="control steps (frames, 0.1 s each) per stage (default 100)")
    parser.add_argument("--size", type=int, default=224, help="image side in pixels (224)")
    parser.add_argument("--seeds", type=int, default=1,
                        help="seed variants per scenario (default 1: the fixed seeds)")
    parser.add_argument("--force", action="store_true", help="overwrite existing bags")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from robo_reward_ros.simulation.episode_sets import make_sim_bags
    try:
        make_sim_bags(args.out, args.scenario, args.steps, args.size, args.seeds, args.force)
    except (KeyError, RuntimeError, ImportError) as exc:
        return fail("sim-bags", exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
