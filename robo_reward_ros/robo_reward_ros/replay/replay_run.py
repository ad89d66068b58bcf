# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A replay run: bags through the offline pipeline (and optionally the live node).

Written as logs, plots and an agreement report; what ``robo-reward replay`` runs.
"""
from __future__ import annotations

import json
import os
from typing import Optional, Sequence

from robo_reward_ros.recordings.output_paths import path_inside, safe_file_name


def write_plots(out_dir: str, note: str = "", live_dir: Optional[str] = None) -> list:
    from robo_reward_ros.visualisation.plots import plot_episode
    from robo_reward_ros.recordings.trace import read_replay
    data = read_replay(out_dir)
    live = read_replay(live_dir)["estimates"] if live_dir else {}
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    return [plot_episode(summary, data["estimates"][summary["name"]],
                         data["events"][summary["name"]],
                         path_inside(out_dir, "plots", safe_file_name(summary["name"]) + ".png"), note,
                         live.get(summary["name"]))
            for summary in data["episodes"]]


def run_replay(bags: Sequence[str], out: str, model: str = "", backend: str = "",
               precision: str = "", device: str = "cpu", params: Sequence[str] = (),
               max_frames: Optional[int] = None, plots: bool = True, live: bool = False,
               progress_bar: bool = True, log=print, reading=None, force: bool = False,
               mcap: bool = False, ray=None) -> dict:
    """Replay bags; ``reading`` (RecordingOptions): how to read robots' recordings; ``mcap``: MCAP per episode.

    The model: see replay.offline_parameter_values (the demo preset by default).

    ``ray`` (replay.ray_replay.RayOptions, or None): spread the bags over Ray workers instead.
    """
    import dataclasses
    from robo_reward_ros.replay.bag_replay import replay_bags
    from robo_reward_ros.recordings.episode_bag import find_bags
    from robo_reward_ros.recordings.robot_recording import RecordingOptions
    from robo_reward_ros.replay.offline_replay import (OfflineReplay, model_info,
                                                       offline_parameter_values)
    from robo_reward_ros.replay.scored_episodes import run_key
    from robo_reward_ros.recordings.trace import write_traces
    reading = reading or RecordingOptions()
    if max_frames is not None:
        reading = dataclasses.replace(reading, max_frames=max_frames)
    if live and reading != RecordingOptions(max_frames=reading.max_frames):
        raise ValueError("--live replays the project's own episode bags; it takes no reading options")
    paths = find_bags(bags)
    values, tiny = offline_parameter_values(model, backend, precision, device, params, log)
    _check_some_bag_reads(paths, reading)
    info = {**model_info(values, tiny),
            "parameters": {p.partition("=")[0]: p.partition("=")[2] for p in params},
            "bags": paths, "mode": "offline", "reading": reading.describe()}
    key = run_key(values, reading.describe())
    if ray is not None:
        if live:
            raise ValueError("--live runs the installed node on this machine; it does not combine with --ray")
        from robo_reward_ros.settings.node_settings import read_settings
        from robo_reward_ros.replay.ray_replay import replay_bags_on_ray
        done, written = replay_bags_on_ray(values, paths, out, reading, key, force, mcap, ray,
                                           progress_bar, log)
        summary = _write_results(done, out, info, mcap, written, reading, read_settings(values).monitor.cameras[0])
    else:
        replayer = OfflineReplay(values)
        writer = None
        if mcap:
            from robo_reward_ros.recordings.episode_mcap import EpisodeMcapWriter
            writer = EpisodeMcapWriter(os.path.join(out, "mcap"), values)
        try:
            # --live compares against the episodes' frames: no stored results
            done = replay_bags(replayer, paths, out, reading, key, force or live, progress_bar, writer)
            summary = _write_results(done, out, info, mcap, writer.written if writer else [], reading,
                                     replayer.camera)
            if live:
                from robo_reward_ros.evaluation.agreement import compare
                from robo_reward_ros.node.live_replay import live_replay_all
                live_dir = os.path.join(out, "live")
                live_traces = live_replay_all(values, paths, os.path.join(live_dir, "reward_node.log"),
                                              max_frames, log)
                write_traces(live_traces, live_dir, {**info, "mode": "live"})
                agreement = compare(done.traces, live_traces, replayer.model)
                with open(os.path.join(out, "agreement.json"), "w") as handle:
                    json.dump(agreement, handle, indent=1)
                summary["agreement"] = agreement
        finally:
            replayer.close()
    if plots:
        note = " - tiny random model" if tiny else ""
        summary["plots"] = write_plots(out, note, os.path.join(out, "live") if live else None)
    return summary


def _check_some_bag_reads(paths: Sequence[str], reading) -> None:
    """Fail before the model loads (seconds to minutes) when not one of the bags can be read.

    A missing topic or instruction is found by opening the bag and reading its small topics;
    with some bags readable, the others are reported in turn, as always.
    """
    from robo_reward_ros.replay.bag_replay import bag_error
    from robo_reward_ros.recordings.robot_recording import (RecordingError, RecordingOptions,
                                                            is_own_layout, read_recording)
    problems = []
    for bag in paths:
        try:
            if reading == RecordingOptions(max_frames=reading.max_frames) and is_own_layout(bag):
                return
            episodes = read_recording(bag, reading)
            next(episodes, None)
            episodes.close()
            return
        except (RecordingError, OSError, ValueError) as exc:
            problems.append(bag_error(bag, exc))
        except Exception as exc:  # rosbags' own errors for what is not a bag
            problems.append(f"{bag}: {type(exc).__name__}: {exc}")
    if problems:
        raise ValueError("no episode could be replayed: " + "; ".join(problems))


def _write_results(done, out: str, info: dict, mcap: bool, written: list, reading, camera: str) -> dict:
    """Write the run's logs (traces in bag order) and, with MCAPs, their Foxglove layout; return the summary."""
    from robo_reward_ros.recordings.trace import write_traces
    if not done.traces:
        raise ValueError("no episode could be replayed: " + "; ".join(done.errors))
    write_traces(done.traces, out, {**info, "errors": done.errors})
    summary = {"out": out, "episodes": len(done.traces), "scored": done.scored, "reused": done.reused,
               "errors": done.errors, "refusals": done.refusals, "model": info["model_description"],
               "estimates": sum(len(t.estimates) for t in done.traces)}
    if mcap:
        summary["mcap"] = written
        summary["layout"] = _write_run_layout(os.path.join(out, "mcap"), reading, done.traces, camera)
    return summary


def _write_run_layout(folder: str, reading, traces, own_camera: str) -> str:
    """Write OUT/mcap/foxglove_layout.json for the cameras this run's episodes had.

    The project's own bags have one camera, /camera/image_raw, named ``own_camera`` in estimates.
    """
    from robo_reward_ros.visualisation.foxglove_layout import make_layout, write_layout
    cameras = {}
    for trace in traces:
        for name, stats in trace.summary().get("cameras", {}).items():
            cameras.setdefault(stats["topic"], name)
    if not cameras and not reading.camera_topics:
        cameras = {"/camera/image_raw": own_camera}
    topics = list(reading.camera_topics) or list(cameras)
    names = [cameras.get(t) for t in topics]
    os.makedirs(folder, exist_ok=True)
    return write_layout(os.path.join(folder, "foxglove_layout.json"),
                        make_layout(topics, names if all(names) else None))
