# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
r"""``robo-reward calibrate BAG...``: choose a model's monitor thresholds from labelled episodes.

The model scores every episode once (the node's loop, with a monitor that never ends an
episode); a sweep then replays only the task monitor over those estimates and keeps, on a
validation split, the success threshold and k-of-n with the best success-detection F1 and the
stall, regression and low-progress settings with the best failure-detection F1
(evaluation/calibration.py). The chosen values are reported with their F1 on the held-out test
split, next to the built-in defaults' figures, and written to monitor_defaults.yaml, which the
node applies to the parameters a user has not set (settings/monitor_defaults.py).

    robo-reward calibrate sim_bags/ --model ~/checkpoints/mine    # writes ~/checkpoints/mine/monitor_defaults.yaml
    robo-reward calibrate robot_bags/ --labels labels.csv --camera-topic /wrist/image_raw \
        --instruction "pick up the cube" --model DIR --out DIR/monitor_defaults.yaml
    robo-reward calibrate --replay calibration/ --model DIR    # estimates scored before, no model run
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from typing import Any, Dict, Optional, Sequence

from robo_reward_ros.cli import fail, no_progress_bars
from robo_reward_ros.cli.model_args import add_model_arguments
from robo_reward_ros.cli.recording_args import add_recording_arguments, recording_options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward calibrate", description=__doc__.splitlines()[0])
    parser.add_argument("bags", nargs="*", help="labelled episode bags (robo-reward sim-bags writes them), "
                                                "or folders holding them")
    add_model_arguments(parser)
    parser.add_argument("--replay", action="append", default=[], metavar="DIR",
                        help="a folder of estimates scored before (robo-reward replay with calibrate's scoring "
                             "parameters, or an earlier calibrate's --work); repeatable")
    parser.add_argument("--labels", default="", metavar="CSV_OR_YAML",
                        help="outcomes of episodes whose recordings carry none (as robo-reward eval --labels)")
    parser.add_argument("--test-fraction", type=float, default=0.3,
                        help="share of each outcome's episodes held out for the test figures (default 0.3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the validation/test split (default 0)")
    parser.add_argument("--work", default="calibration",
                        help="folder for the scored estimates (reused by a re-run) and calibration.json "
                             "(default ./calibration)")
    parser.add_argument("--out", default="",
                        help="the file to write, or a folder for monitor_defaults.yaml (default: the "
                             "--model checkpoint directory)")
    parser.add_argument("--dry-run", action="store_true", help="report, write no monitor_defaults.yaml")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_recording_arguments(parser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.bags and not args.replay:
        parser.error("give labelled episode bags, --replay DIR, or both")
    if args.quiet:
        no_progress_bars()
    try:
        target = _target(args)
        report = run(args, target)
    except (FileNotFoundError, KeyError, ValueError, RuntimeError, ImportError) as exc:
        return fail("calibrate", exc)
    print(summary_text(report))
    if not report["chosen"]:
        print("calibrate: nothing could be calibrated on these episodes; no file written", file=sys.stderr)
        return 1
    return 0


def _target(args: argparse.Namespace) -> str:
    """Where the file goes: --out (a folder gets monitor_defaults.yaml), else the --model directory."""
    from robo_reward_ros.settings.monitor_defaults import FILE_NAME
    if args.dry_run:
        return ""
    target = os.path.expanduser(args.out or args.model)
    if not target or (not args.out and not os.path.isdir(target)):
        raise ValueError("say where to write the file: --out PATH (--model is not a local checkpoint directory)")
    return os.path.join(target, FILE_NAME) if os.path.isdir(target) else target


def run(args: argparse.Namespace, target: str) -> Dict[str, Any]:
    from robo_reward_ros.evaluation import calibration as cal
    from robo_reward_ros.evaluation.eval_run import merge_replays
    from robo_reward_ros.replay.offline_replay import model_info, offline_parameter_values, parse_param
    from robo_reward_ros.settings.monitor_defaults import SWITCH, resolve, write_file
    folders = list(args.replay)
    if args.bags:
        from robo_reward_ros.replay.replay_run import run_replay
        summary = run_replay(args.bags, args.work, args.model, args.backend, args.precision, args.device,
                             list(args.param) + list(cal.SCORING_PARAMETERS), plots=False,
                             progress_bar=not args.quiet, reading=recording_options(args))
        for error in summary["errors"]:
            print(f"robo-reward calibrate: {error}", file=sys.stderr)
        folders.insert(0, args.work)
    data = merge_replays(folders)
    if args.labels:
        from robo_reward_ros.recordings.episode_labels import label_replay, load_labels
        label_replay(data, load_labels(args.labels), args.labels, True)
    episodes, skipped = cal.labelled_episodes(data)
    validation, test = cal.split(episodes, args.test_fraction, args.seed)
    # The sweep starts from the node's built-in values (and the user's -p), not an earlier file's.
    values, _ = offline_parameter_values(args.model, args.backend, args.precision, args.device, args.param,
                                         log=lambda text: None)
    given = {parse_param(p)[0] for p in args.param}
    base = resolve({**values, SWITCH: False}, given).values
    result = cal.calibrate(validation, base, None if args.quiet else _bar)
    cameras = cal.cameras_of(episodes)
    figures = {name: {"built_in": cal.scores(split, base, cameras) if split else None,
                      "chosen": cal.scores(split, result.values, cameras) if split else None}
               for name, split in (("validation", validation), ("test", test))}
    info = data.get("info", {})
    report = {"chosen": result.chosen, "validation_episodes": [e.name for e in validation],
              "test_episodes": [e.name for e in test], "skipped": skipped,
              "not_calibrated": result.not_calibrated, "figures": figures, "trials": result.trials,
              "model": info.get("model_description") or model_info(values, False)["model_description"],
              "file": None}
    if target and result.chosen:
        report["file"] = write_file(target, result.chosen, _comment(report, len(episodes)))
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(args.work, "calibration.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    report["report"] = os.path.join(args.work, "calibration.json")
    return report


def _bar(total: int):
    from tqdm import tqdm
    return tqdm(total=total, desc="monitor settings", unit="setting", mininterval=1.0)


def _f1(figures: Optional[Dict[str, Any]], which: str) -> str:
    f1 = figures[f"{which}_detection"]["f1"] if figures else None
    return "n/a" if f1 is None else f"{f1:.2f}"


def _comment(report: Dict[str, Any], episodes: int) -> list:
    """Write the file's header: who wrote it, from what, how well the values did (validation and held-out test F1)."""
    lines = [f"recommended monitor settings for this checkpoint: robo-reward calibrate, "
             f"{datetime.date.today().isoformat()}",
             f"model: {report['model']}",
             f"{episodes} labelled one-stage episodes: {len(report['validation_episodes'])} validation, "
             f"{len(report['test_episodes'])} held-out test"]
    for split in ("validation", "test"):
        figures = report["figures"][split]
        lines.append(f"{split} F1 success/failure detection: chosen {_f1(figures['chosen'], 'success')}/"
                     f"{_f1(figures['chosen'], 'failure')}, built-in defaults {_f1(figures['built_in'], 'success')}/"
                     f"{_f1(figures['built_in'], 'failure')}")
    lines.append("the reward node applies these to the parameters not set explicitly "
                 "(model.monitor_defaults:=false: not at all)")
    return lines


def summary_text(report: Dict[str, Any]) -> str:
    lines = [f"calibrate: model {report['model']}",
             f"episodes: {len(report['validation_episodes'])} validation, {len(report['test_episodes'])} "
             f"held-out test, {len(report['skipped'])} left out"]
    lines += [f"  left out: {why}" for why in report["skipped"]]
    lines += [f"  not calibrated: {why}" for why in report["not_calibrated"]]
    lines.append("chosen: " + (", ".join(f"{k}={v!r}" for k, v in report["chosen"].items()) or "nothing"))
    lines.append(f"{'F1 (success / failure detection)':<36}{'chosen':>16}{'built-in defaults':>20}")
    for split in ("validation", "test"):
        figures = report["figures"][split]
        lines.append(f"{split:<36}{_f1(figures['chosen'], 'success') + ' / ' + _f1(figures['chosen'], 'failure'):>16}"
                     f"{_f1(figures['built_in'], 'success') + ' / ' + _f1(figures['built_in'], 'failure'):>20}")
    lines.append(f"calibrate: wrote {report['file']}" if report["file"] else "calibrate: no file written")
    lines.append(f"calibrate: report {report['report']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
