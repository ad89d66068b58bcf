# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward eval REPLAY_DIR...``: reward-quality metrics over replayed episodes.

The metrics (VOC, Kendall tau across outcomes, outcome differences, binned MAE, preference accuracy,
success and failure detection with delays) come as a Markdown and a JSON report with summary plots.

    robo-reward eval replay/ [--out eval] [--no-preference]
    robo-reward eval robot_replay/ --labels labels.csv     # robot bags: outcomes from a labels file
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward eval", description=__doc__.splitlines()[0])
    parser.add_argument("replays", nargs="+", help="folders written by robo-reward replay")
    parser.add_argument("--out", default="eval", help="report folder (default ./eval)")
    parser.add_argument("--no-preference", action="store_true",
                        help="skip preference accuracy (it loads the model and the bags)")
    parser.add_argument("--labels", default="", metavar="CSV_OR_YAML",
                        help="outcomes (and success/failure times) of episodes whose recordings carry "
                             "none: columns episode,outcome[,success_sec,failure_sec,task,failure_kind]")
    parser.add_argument("--preference-frames", type=int, default=8,
                        help="frames per clip in a preference query (default 8)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from robo_reward_ros.evaluation.eval_run import run_eval
    try:
        outcome = run_eval(args.replays, args.out, not args.no_preference, args.preference_frames,
                           args.labels)
    except (FileNotFoundError, KeyError, ValueError) as exc:
        return fail("eval", exc)
    from robo_reward_ros.evaluation.report import metrics_table
    print(metrics_table(outcome["metrics"]))
    if outcome["unlabelled"]:
        print(f"\neval: {len(outcome['unlabelled'])} episode(s) without a label (not judged): "
              + ", ".join(outcome["unlabelled"]))
    known = [r for r in outcome["rows"] if r.get("outcome") in ("success", "partial", "failure")]
    if not known:
        print(f"\neval: none of the {len(outcome['rows'])} episode(s) has a known outcome, so no "
              f"metric can be computed (n/a). A robot's recordings carry none: give them with "
              f"--labels FILE (episode,outcome[,success_sec,...]; see --help)", file=sys.stderr)
    print(f"\neval: report {args.out}/report.md, {args.out}/metrics.json, {args.out}/summary.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
