"""A replay run: bags through the offline pipeline (and optionally the live node).

Written as logs, plots and an agreement report; what ``robo-reward replay`` runs.
"""
from __future__ import annotations

import json
import os
from typing import Optional, Sequence


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
