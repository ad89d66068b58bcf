# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
r"""``robo-reward replay BAG...``: episodes from bags through the node's reward loop, offline.

The loop is the node's own (window, model, task monitor); it writes per-estimate and event logs
(JSON Lines and CSV) and a plot per episode, and with ``--mcap`` an MCAP per episode (the camera
stream with the node's messages, for Foxglove or PlotJuggler). Any rosbag2 recording (MCAP or
sqlite3) is read by naming its topics; frames are decoded as they are read. ``--live`` also
replays the project's own bags through the installed reward node and reports how far the two agree.

    robo-reward replay BAG_OR_FOLDER... [--model DIR] [-p failure.stall_window_sec=4] [--out DIR] [--live]
    robo-reward replay fleet_bags/ --ray --ray-workers 4      # bags spread over Ray workers
    robo-reward replay robot_bags/ --camera-topic /wrist/image_raw/compressed \
        --camera-topic /scene/image_raw --instruction-topic /task --split-gap 3 --mcap
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail, no_progress_bars
from robo_reward_ros.cli.model_args import add_model_arguments
from robo_reward_ros.cli.recording_args import add_recording_arguments, recording_options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward replay",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("bags", nargs="+", help="bag folders, or folders holding bag folders")
    add_model_arguments(parser)
    parser.add_argument("--out", default="replay", help="output folder (default ./replay)")
    parser.add_argument("--max-frames", type=int, help="replay at most this many frames per bag")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--live", action="store_true",
                        help="also replay through the installed reward_node (real time) and "
                             "write live/ and agreement.json")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--force", action="store_true",
                        help="score every episode again (default: reuse OUT/scored results made "
                             "with the same model, parameters and bag)")
    parser.add_argument("--mcap", action="store_true",
                        help="also write OUT/mcap/EPISODE.mcap: camera stream + estimates, task "
                             "state and failure events on the recording's timeline")
    scale = parser.add_argument_group(
        "Ray", "spread the bags over Ray workers, each holding the model once (pip install -r "
               "requirements/scale.txt); results land in OUT as without --ray")
    scale.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="without ADDRESS: a local Ray runtime sized to the workers; with one "
                            "(auto, HOST:PORT, ray://HOST:10001): join that cluster, whose nodes "
                            "see the bags and OUT at the same paths. Put it after the bags")
    scale.add_argument("--ray-workers", type=int, default=2, metavar="N",
                       help="workers, each with its own copy of the model (default 2)")
    scale.add_argument("--ray-cpus-per-worker", type=float, default=1.0, metavar="N",
                       help="CPUs each worker reserves (default 1)")
    scale.add_argument("--ray-gpus-per-worker", type=float, default=0.0, metavar="N",
                       help="GPUs each worker reserves: 1 for one per GPU, 0.5 for two per GPU "
                            "(default 0; use with --device cuda)")
    scale.add_argument("--ray-retries", type=int, default=3, metavar="N",
                       help="times a bag is replayed again after its worker process died (default 3)")
    add_recording_arguments(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.quiet:
        no_progress_bars()
    from robo_reward_ros.replay.replay_run import run_replay
    reading = recording_options(args)
    try:
        ray = None
        if args.ray is not None:
            from robo_reward_ros.replay.ray_replay import RayOptions, check_address
            ray = RayOptions(check_address(args.ray), args.ray_workers, args.ray_cpus_per_worker,
                             args.ray_gpus_per_worker, args.ray_retries)
        summary = run_replay(args.bags, args.out, args.model, args.backend, args.precision,
                             args.device, args.param, args.max_frames, not args.no_plots,
                             args.live, not args.quiet, reading=reading, force=args.force,
                             mcap=args.mcap, ray=ray)
    except (FileNotFoundError, ImportError, ValueError, RuntimeError, TimeoutError) as exc:
        return fail("replay", exc)
    print(f"replay: {summary['episodes']} episode(s) ({summary['scored']} scored, "
          f"{summary['reused']} already scored), {summary['estimates']} estimates -> "
          f"{summary['out']}/ (estimates.jsonl/.csv, events.jsonl/.csv, episodes.json"
          f"{', plots/' if 'plots' in summary else ''}{', mcap/' if 'mcap' in summary else ''}); "
          f"model {summary['model']}")
    for line in summary["refusals"]:
        print(f"robo-reward replay: {line}", file=sys.stderr)
    for error in summary["errors"]:
        print(f"robo-reward replay: {error}", file=sys.stderr)
    if "agreement" in summary:
        a = summary["agreement"]
        print(f"live vs offline: same decisions in {a['same_decisions']}/{a['compared']} "
              f"episodes; model on the node's windows: max |progress diff| "
              f"{_fmt(a['model_max_abs_progress_diff'])}, max |success diff| "
              f"{_fmt(a['model_max_abs_success_diff'])} over {a['windows_rescored']} windows; "
              f"trace mean |progress diff| {_fmt(a['trace_mean_abs_progress_diff'])}")
    return 1 if summary["errors"] else 0


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.2g}"


if __name__ == "__main__":
    sys.exit(main())
