"""``robo-reward sim-bags OUT``: render Meta-World episodes (scripted experts, fixed seeds,
known outcomes) offscreen into one ROS 2 bag per episode (MCAP; layout in
evaluation/episode_bag.py). No download: Meta-World ships its scenes and expert policies.

    robo-reward sim-bags OUT [--scenario NAME ...] [--steps 100] [--size 224] [--seeds 1]
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional, Sequence


def build_parser() -> argparse.ArgumentParser:
    from robo_reward_ros.evaluation.metaworld_episodes import SCENARIOS
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


def make_sim_bags(out: str, scenarios: Sequence[str] = (), steps: int = 100, size: int = 224,
                  seeds: int = 1, force: bool = False, log=print) -> List[str]:
    """Render and write the bags; an existing bag is kept unless ``force``. Returns their paths."""
    import shutil
    from robo_reward_ros.evaluation.episode_bag import write_episode_bag
    from robo_reward_ros.evaluation.metaworld_episodes import (SCENARIOS, generate_episode,
                                                               scenario_by_name)
    chosen = [scenario_by_name(n) for n in scenarios] if scenarios else list(SCENARIOS)
    paths = []
    for offset in range(seeds):
        for scenario in chosen:
            name = scenario.name if offset == 0 else f"{scenario.name}_s{scenario.seed + offset}"
            path = os.path.join(out, name)
            if os.path.isfile(os.path.join(path, "metadata.yaml")) and not force:
                paths.append(path)
                continue
            if os.path.exists(path):
                shutil.rmtree(path)
            stage_steps = steps * (2 if scenario.mode == "two_stage" else 1)
            episode = generate_episode(scenario, stage_steps, size, seed_offset=offset)
            write_episode_bag(episode, path)
            log(f"{path}: {len(episode.frames)} frames, {episode.outcome}"
                + (f" ({episode.failure_kind} at frame {episode.failure_step})"
                   if episode.failure_kind else ""))
            paths.append(path)
    return paths


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        make_sim_bags(args.out, args.scenario, args.steps, args.size, args.seeds, args.force)
    except (KeyError, RuntimeError, ImportError) as exc:
        print(f"robo-reward sim-bags: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
