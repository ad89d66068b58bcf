"""``robo-reward replay BAG...``: episodes from bags through the node's reward loop (window,
model, task monitor), offline; per-estimate and event logs (JSON Lines and CSV) and a plot per
episode. ``--live`` also replays them through the installed reward node over ROS topics and
reports how far the two agree.

    robo-reward replay BAG_OR_FOLDER... [--model DIR] [-p failure.stall_window_sec=4] [--out DIR] [--live]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional, Sequence


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


def write_plots(out_dir: str, note: str = "", live_dir: Optional[str] = None) -> list:
    from robo_reward_ros.evaluation.plots import plot_episode
    from robo_reward_ros.evaluation.trace import read_replay
    data = read_replay(out_dir)
    live = read_replay(live_dir)["estimates"] if live_dir else {}
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    return [plot_episode(summary, data["estimates"][summary["name"]],
                         data["events"][summary["name"]],
                         os.path.join(out_dir, "plots", summary["name"] + ".png"), note,
                         live.get(summary["name"]))
            for summary in data["episodes"]]


def run_replay(bags: Sequence[str], out: str, model: str = "", backend: str = "robometer",
               precision: str = "fp32", device: str = "cpu", params: Sequence[str] = (),
               max_frames: Optional[int] = None, plots: bool = True, live: bool = False,
               progress_bar: bool = True, log=print) -> dict:
    from robo_reward_ros.evaluation.demo_assets import demo_checkpoint
    from robo_reward_ros.evaluation.episode_bag import find_bags
    from robo_reward_ros.evaluation.replay import (OfflineReplay, node_parameter_values,
                                                   parse_param, replay_all)
    from robo_reward_ros.evaluation.trace import write_traces
    paths = find_bags(bags)
    tiny = not model
    model = model or demo_checkpoint(log)
    values = node_parameter_values(model, backend, precision, device,
                                   dict(parse_param(p) for p in params))
    replayer = OfflineReplay(values)
    info = {"model": model, "backend": backend, "precision": precision, "tiny_random_model": tiny,
            "parameters": {p.partition("=")[0]: p.partition("=")[2] for p in params},
            "bags": paths, "mode": "offline"}
    try:
        traces = replay_all(replayer, paths, progress_bar, max_frames)
        write_traces(traces, out, info)
        summary = {"out": out, "episodes": len(traces),
                   "estimates": sum(len(t.estimates) for t in traces)}
        if live:
            from robo_reward_ros.evaluation.agreement import compare
            from robo_reward_ros.evaluation.live_replay import live_replay_all
            live_dir = os.path.join(out, "live")
            live_traces = live_replay_all(values, paths, os.path.join(live_dir, "reward_node.log"),
                                          max_frames, log)
            write_traces(live_traces, live_dir, {**info, "mode": "live"})
            agreement = compare(traces, live_traces, replayer.model)
            with open(os.path.join(out, "agreement.json"), "w") as handle:
                json.dump(agreement, handle, indent=1)
            summary["agreement"] = agreement
    finally:
        replayer.close()
    if plots:
        note = " - tiny random model" if tiny else ""
        summary["plots"] = write_plots(out, note, os.path.join(out, "live") if live else None)
    return summary


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        summary = run_replay(args.bags, args.out, args.model, args.backend, args.precision,
                             args.device, args.param, args.max_frames, not args.no_plots,
                             args.live, not args.quiet)
    except (FileNotFoundError, ValueError, RuntimeError, TimeoutError) as exc:
        print(f"robo-reward replay: {exc}", file=sys.stderr)
        return 1
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
