# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward eval REPLAY_DIR...``: reward-quality metrics over replayed episodes.

The metrics (VOC, Kendall tau across outcomes, outcome differences, binned MAE, preference accuracy,
success and failure detection with delays) come as a Markdown and a JSON report with summary plots.
``--operator-logs`` adds the model's success decisions against an operator's labels, from the
node's episode logs (docs/operator-loop.md); replays are optional with it.

    robo-reward eval replay/ [--out eval] [--no-preference]
    robo-reward eval robot_replay/ --labels labels.csv     # robot bags: outcomes from a labels file
    robo-reward eval --operator-logs ~/.ros/robo_reward/episodes --out eval
    robo-reward eval --confusion bags/mixed ~/datasets/mixed --out confusion [--model DIR] [--floor-model none]

``--confusion`` takes bag folders and LeRobot datasets instead of replays: every episode is scored
against every distinct instruction of the set, and the column-normalised diagonal mean of the
video x instruction matrix is printed with a random model's as the floor (docs/data-selection.md).
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward eval", description=__doc__.splitlines()[0])
    parser.add_argument("replays", nargs="*",
                        help="folders written by robo-reward replay (optional with --operator-logs); with "
                             "--confusion: bag folders and LeRobot datasets")
    parser.add_argument("--out", default="eval", help="report folder (default ./eval)")
    parser.add_argument("--no-preference", action="store_true",
                        help="skip preference accuracy (it loads the model and the bags)")
    parser.add_argument("--labels", default="", metavar="CSV_OR_YAML",
                        help="outcomes (and success/failure times) of episodes whose recordings carry "
                             "none: columns episode,outcome[,success_sec,failure_sec,task,failure_kind]")
    parser.add_argument("--preference-frames", type=int, default=8,
                        help="frames per clip in a preference query (default 8)")
    parser.add_argument("--operator-logs", nargs="+", default=[], metavar="DIR",
                        help="folders of the node's episode logs (episode_log.directory): the model's "
                             "success decisions against the operator's labels, vetoes per hour, false "
                             "alarms, takeovers; writes operator_agreement.json and .md into --out")
    from robo_reward_ros.cli.model_args import add_model_arguments
    from robo_reward_ros.cli.rank import add_ray_arguments, add_source_arguments
    confusion = parser.add_argument_group(
        "confusion", "--confusion: every episode against every distinct instruction; writes confusion.csv, "
                     ".parquet, .png and .json into --out")
    confusion.add_argument("--confusion", action="store_true",
                           help="the video x instruction matrix of the bags and datasets given")
    confusion.add_argument("--floor-model", default="tiny-random", metavar="MODEL",
                           help="the random floor: tiny-random (default: a random-weight checkpoint of the "
                                "model's backend, built offline), a checkpoint directory, or none")
    confusion.add_argument("--quiet", action="store_true", help="no progress bar")
    add_model_arguments(confusion)
    add_source_arguments(confusion)
    add_ray_arguments(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.confusion:
        if not args.replays:
            parser.error("--confusion needs bag folders or LeRobot datasets")
        return _confusion(args)
    if not args.replays and not args.operator_logs:
        parser.error("give replay folders (written by robo-reward replay), --operator-logs DIR, or both")
    if args.replays:
        status = _replay_metrics(args)
        if status:
            return status
    if args.operator_logs:
        return _operator_agreement(args)
    return 0


def _confusion(args: argparse.Namespace) -> int:
    from robo_reward_ros.cli import no_progress_bars
    from robo_reward_ros.cli.rank import ray_options, source_options
    if args.quiet:
        no_progress_bars()
    from robo_reward_ros.replay.rank_run import run_confusion
    try:
        summary = run_confusion(args.replays, args.out, source_options(args), args.model, args.backend,
                                args.precision, args.device, args.param, args.floor_model, ray_options(args),
                                not args.quiet, log=lambda text: print(text, file=sys.stderr))
    except (FileNotFoundError, ImportError, ValueError, RuntimeError) as exc:
        return fail("eval", exc)
    count = len(summary["matrix_instructions"])
    print(f"confusion: {summary['episodes']} episode(s), {count} instructions (chance 1/{count} = "
          f"{1.0 / count:.3f})")
    print(f"  column-normalised diagonal mean {summary['model']['diagonal_mean']:.3f}: "
          f"{summary['model']['description']}")
    if "floor" in summary:
        print(f"  floor: {summary['floor']['diagonal_mean']:.3f}: {summary['floor']['description']}")
    else:
        print(f"  floor: not computed: {summary['floor_note']}")
    print(f"eval: {summary['table']}, {summary['plot']}, {args.out}/confusion.json")
    for error in summary["errors"]:
        print(f"robo-reward eval: {error}", file=sys.stderr)
    return 1 if summary["errors"] else 0


def _operator_agreement(args: argparse.Namespace) -> int:
    from robo_reward_ros.evaluation.operator_agreement import operator_agreement
    from robo_reward_ros.evaluation.operator_agreement_report import agreement_table, write_agreement_reports
    try:
        result = operator_agreement(args.operator_logs)
    except (FileNotFoundError, ValueError) as exc:
        return fail("eval", exc)
    if args.replays:
        print()
    print(agreement_table(result))
    json_path, md_path = write_agreement_reports(result, args.out)
    print(f"\neval: operator agreement report {md_path}, {json_path}")
    return 0


def _replay_metrics(args: argparse.Namespace) -> int:
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
