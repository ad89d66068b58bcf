# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
r"""``robo-reward filter RANKING --out DIR``: write a ranking's chosen spans as a new LeRobot v3 dataset or bag folder.

From a ranking (``robo-reward rank``'s Parquet or CSV), keep the best K spans per instruction
(``--top``), those scoring at least X (``--min-score``) and/or those of some instructions
(``--instruction``). LeRobot sources give a new LeRobot v3 dataset whose episodes are the kept
spans; bag sources give one bag per kept span. ``DIR/manifest.json`` and ``manifest.csv`` say
what was kept, why, and what was left out.

    robo-reward filter ranking.parquet --out picked --top 20
    robo-reward filter ranking.parquet --out picked --min-score 0.8 --instruction "open the drawer"
    robo-reward filter ranking.csv --out picked_bags --top 5 --ray      # encoding on Ray workers
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward filter", description=__doc__.splitlines()[0])
    parser.add_argument("ranking", help="the ranked table (Parquet, or .csv) written by robo-reward rank")
    parser.add_argument("--out", required=True, metavar="DIR", help="the new dataset or bag folder (must not exist)")
    parser.add_argument("--top", type=int, metavar="K", help="keep the best K spans per instruction (by rank)")
    parser.add_argument("--min-score", type=float, metavar="X", help="keep spans whose score is at least X")
    parser.add_argument("--instruction", action="append", default=[], metavar="TEXT",
                        help="keep only this instruction's spans (repeatable)")
    parser.add_argument("--task-from", choices=("dataset", "ranking"), default="dataset",
                        help="LeRobot: a kept episode's task is the source episode's own (default) or the "
                             "instruction the ranking chose it for (one episode per instruction then)")
    parser.add_argument("--crf", type=int, metavar="N",
                        help="LeRobot: quality of the re-encoded videos (default 18 for H.264, 25 for AV1)")
    parser.add_argument("--camera-topic", default="", metavar="TOPIC",
                        help="bags: the camera whose frames the ranking counted (default: /camera/image_raw or "
                             "the only image topic)")
    parser.add_argument("--context-topic", action="append", default=[], metavar="TOPIC",
                        help="bags: a topic whose newest message before a span is written at its start "
                             "(besides /instruction, /episode and transient-local topics; repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    scale = parser.add_argument_group(
        "Ray", "encode the kept spans' videos (LeRobot) or write the span bags on Ray workers (pip install -r "
               "requirements/scale.txt); the output is the single-process run's (rows, metadata, decoded frames)")
    scale.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="without ADDRESS: a local Ray runtime sized to the workers; with one (auto, "
                            "HOST:PORT, ray://HOST:10001): join that cluster, whose nodes see the sources and "
                            "DIR at the same paths")
    scale.add_argument("--ray-workers", type=int, default=2, metavar="N", help="tasks at a time (default 2)")
    scale.add_argument("--ray-cpus-per-worker", type=float, default=1.0, metavar="N",
                       help="CPUs each task reserves (default 1)")
    scale.add_argument("--ray-retries", type=int, default=3, metavar="N",
                       help="times a task is run again after its worker process died (default 3)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from robo_reward_ros.recordings.dataset_filter import filter_ranking
    from robo_reward_ros.recordings.span_selection import SelectionRule
    try:
        rule = SelectionRule(args.top, args.min_score, tuple(args.instruction))
        arguments = dict(ranking=args.ranking, out_dir=args.out, rule=rule, task_from=args.task_from, crf=args.crf,
                         camera_topic=args.camera_topic, context_topics=args.context_topic,
                         progress_bar=not args.quiet)
        if args.ray is not None:
            from robo_reward_ros.replay.ray_filter import filter_on_ray
            from robo_reward_ros.replay.ray_replay import RayOptions, check_address
            options = RayOptions(check_address(args.ray), args.ray_workers, args.ray_cpus_per_worker, 0.0,
                                 args.ray_retries)
            summary = filter_on_ray(options, log=lambda text: print(text, file=sys.stderr), **arguments)
        else:
            summary = filter_ranking(**arguments)
    except (FileNotFoundError, FileExistsError, ImportError, ValueError, RuntimeError, OSError) as exc:
        return fail("filter", exc)
    what = (f"{summary['episodes']} episode(s), {summary['frames']} frames, {summary['tasks']} task(s): a LeRobot v3 "
            f"dataset" if summary["kind"] == "lerobot" else f"{summary['bags']} bag(s), {summary['frames']} frames")
    print(f"filter: kept {summary['kept_rows']} ranking row(s), left out {summary['left_out_rows']} -> {what} in "
          f"{summary['out']}/ (manifest.json, manifest.csv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
