# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
r"""``robo-reward rank DATA...``: rank episodes (or windows of them) of bags and LeRobot datasets by the reward model.

Each episode, or each window of ``--window`` frames every ``--stride`` frames, is scored against
each ``--instruction`` (default: the episode's own) and ranked per instruction by final progress,
progress gain, success probability or the preference head against a reference clip. The table
(Parquet or CSV, by the file name) is what ``robo-reward filter`` reads (docs/data-selection.md).

    robo-reward rank ~/datasets/mixed --instruction "open the drawer" --out ranked.parquet
    robo-reward rank bags/ --window 20 --stride 10 --by progress_gain --out windows.csv
    robo-reward rank ~/datasets/mixed --by preference --reference bags/expert_demo --out by_pref.csv
    robo-reward rank ~/datasets/big --out ranked.parquet --ray --ray-workers 4
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail, no_progress_bars
from robo_reward_ros.cli.model_args import add_model_arguments
from robo_reward_ros.evaluation.ranking import RANK_BY


def add_source_arguments(parser) -> None:
    parser.add_argument("--camera-key", default="", metavar="KEY",
                        help="LeRobot: the video feature to score (default: the dataset's first video key)")
    parser.add_argument("--camera-topic", default="", metavar="TOPIC",
                        help="bags: the camera topic (default /camera/image_raw, else the bag's only image topic)")
    parser.add_argument("--instruction-topic", default="", metavar="TOPIC",
                        help="bags: std_msgs/String topic with the episode's instruction (default /instruction)")


def add_ray_arguments(parser) -> None:
    scale = parser.add_argument_group(
        "Ray", "spread the episodes over Ray workers, each holding the model once (pip install -r "
               "requirements/scale.txt); the output is the single-process run's")
    scale.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="without ADDRESS: a local Ray runtime sized to the workers; with one (auto, "
                            "HOST:PORT, ray://HOST:10001): join that cluster, whose nodes see the data at the "
                            "same paths. Put it after the data paths")
    scale.add_argument("--ray-workers", type=int, default=2, metavar="N",
                       help="workers, each with its own copy of the model (default 2)")
    scale.add_argument("--ray-cpus-per-worker", type=float, default=1.0, metavar="N")
    scale.add_argument("--ray-gpus-per-worker", type=float, default=0.0, metavar="N",
                       help="GPUs each worker reserves (default 0; use with --device cuda)")
    scale.add_argument("--ray-retries", type=int, default=3, metavar="N",
                       help="times an episode is scored again after its worker process died (default 3)")


def ray_options(args: argparse.Namespace):
    """Return the RayOptions asked for, or None without --ray."""
    if args.ray is None:
        return None
    from robo_reward_ros.replay.ray_replay import RayOptions, check_address
    return RayOptions(check_address(args.ray), args.ray_workers, args.ray_cpus_per_worker,
                      args.ray_gpus_per_worker, args.ray_retries)


def source_options(args: argparse.Namespace):
    from robo_reward_ros.recordings.episode_sources import SourceOptions
    return SourceOptions(args.camera_key, args.camera_topic, args.instruction_topic)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward rank", description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="+",
                        help="LeRobot v3 dataset folders, bag folders, or folders holding bag folders")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="the ranked table: FILE.parquet or FILE.csv")
    parser.add_argument("--instruction", action="append", default=[], metavar="TEXT",
                        help="rank for this instruction (repeatable); default: each episode's own")
    parser.add_argument("--by", default="final_progress", metavar="MEASURE",
                        help=f"what ranks: {', '.join(RANK_BY)} (default final_progress; preference needs "
                             f"--reference)")
    parser.add_argument("--window", type=int, default=0, metavar="N",
                        help="score windows of N frames instead of whole episodes")
    parser.add_argument("--stride", type=int, default=0, metavar="M",
                        help="frames between window starts (default: N, windows side by side)")
    parser.add_argument("--reference", default="", metavar="CLIP",
                        help="--by preference: the clip to beat (a bag folder, or a LeRobot dataset with "
                             "--reference-episode)")
    parser.add_argument("--reference-episode", type=int, default=None, metavar="INDEX",
                        help="the reference's episode index when --reference is a LeRobot dataset (default 0)")
    add_source_arguments(parser)
    add_model_arguments(parser)
    parser.add_argument("--top", type=int, default=5, metavar="K", help="rows per instruction to print (default 5)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_ray_arguments(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.quiet:
        no_progress_bars()
    from robo_reward_ros.replay.rank_run import run_rank
    try:
        summary = run_rank(args.data, args.out, args.by, args.instruction, args.window, args.stride,
                           args.reference, args.reference_episode, source_options(args), args.model,
                           args.backend, args.precision, args.device, args.param, ray_options(args),
                           not args.quiet, log=lambda text: print(text, file=sys.stderr))
    except (FileNotFoundError, ImportError, ValueError, RuntimeError) as exc:
        return fail("rank", exc)
    print(top_rows(summary["ranked"], args.top))
    print(f"rank: {summary['episodes']} episode(s), {summary['rows']} row(s) for {summary['instructions']} "
          f"instruction(s), ranked by {args.by} -> {summary['out']}; model {summary['model']}")
    for error in summary["errors"]:
        print(f"robo-reward rank: {error}", file=sys.stderr)
    return 1 if summary["errors"] else 0


def top_rows(ranked, top: int) -> str:
    """Return the best ``top`` rows of each instruction as a short table."""
    lines = []
    for row in ranked:
        if row["rank"] == 1:
            lines.append(f"{row['instruction']!r} ({row['ranked_by']}):")
        if row["rank"] <= top:
            lines.append(f"  {row['rank']:>3}  {row['score']:7.3f}  {row['kind']} {row['episode']}  frames "
                         f"{row['start_frame']}-{row['end_frame']}  ({row['start_time']:.1f}-{row['end_time']:.1f} s)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
