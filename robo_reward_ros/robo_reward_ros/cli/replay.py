"""``robo-reward replay BAG...``: episodes from bags through the node's reward loop, offline.

The loop is the node's own (window, model, task monitor); it writes per-estimate and event logs
(JSON Lines and CSV) and a plot per episode. ``--live`` also replays them through the installed
reward node over ROS topics and reports how far the two agree.

    robo-reward replay BAG_OR_FOLDER... [--model DIR] [-p failure.stall_window_sec=4] [--out DIR] [--live]
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward replay",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("bags", nargs="+", help="bag folders, or folders holding bag folders")
    parser.add_argument("--model", default="",
                        help="checkpoint directory or id (default: the demo's tiny random "
                             "checkpoint, built on first use)")
    parser.add_argument("--backend", default="robometer",
                        help="robometer, roboreward, topreward or a plugin backend")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a reward_node parameter (repeatable), e.g. -p inference.rate_hz=2")
    parser.add_argument("--out", default="replay", help="output folder (default ./replay)")
    parser.add_argument("--max-frames", type=int, help="replay at most this many frames per bag")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--live", action="store_true",
                        help="also replay through the installed reward_node (real time) and "
                             "write live/ and agreement.json")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from robo_reward_ros.evaluation.replay_run import run_replay
    try:
        summary = run_replay(args.bags, args.out, args.model, args.backend, args.precision,
                             args.device, args.param, args.max_frames, not args.no_plots,
                             args.live, not args.quiet)
    except (FileNotFoundError, ValueError, RuntimeError, TimeoutError) as exc:
        return fail("replay", exc)
    print(f"replay: {summary['episodes']} episode(s), {summary['estimates']} estimates -> "
          f"{summary['out']}/ (estimates.jsonl/.csv, events.jsonl/.csv, episodes.json"
          f"{', plots/' if 'plots' in summary else ''})")
    if "agreement" in summary:
        a = summary["agreement"]
        print(f"live vs offline: same decisions in {a['same_decisions']}/{a['compared']} "
              f"episodes; model on the node's windows: max |progress diff| "
              f"{_fmt(a['model_max_abs_progress_diff'])}, max |success diff| "
              f"{_fmt(a['model_max_abs_success_diff'])} over {a['windows_rescored']} windows; "
              f"trace mean |progress diff| {_fmt(a['trace_mean_abs_progress_diff'])}")
    return 0


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.2g}"


if __name__ == "__main__":
    sys.exit(main())
