# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Score a LeRobot dataset's episodes with the node's pipeline, and optionally write a relabelled copy.

What ``robo-reward lerobot`` runs. Output folder as ``replay`` writes it (``estimates.jsonl``,
``events.jsonl``, ``episodes.json``, plots), so ``robo-reward eval`` reads it; episodes scored
before with the same model, parameters and dataset files are reused unless forced.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Optional, Sequence


def _episode_key(run: dict, dataset, episode, keys: Sequence[str]) -> str:
    """Hash of the run, the dataset's info.json, the episode's row and its video files' sizes."""
    videos = {k: os.path.getsize(dataset.video_path(episode, k)) for k in keys}
    text = json.dumps({**run, "info": dataset.info, "episode": episode.row, "keys": list(keys),
                       "videos": videos}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def run_lerobot(dataset_dir: str, out: str, keys: Optional[Sequence[str]] = None,
                episodes: Optional[Sequence[int]] = None, model: str = "", backend: str = "",
                precision: str = "", device: str = "cpu", params: Sequence[str] = (),
                relabel: str = "", force: bool = False, plots: bool = True, progress_bar: bool = True,
                log=print, relabel_fill: str = "nan") -> dict:
    from tqdm import tqdm
    from robo_reward_ros.core.task_spec import build_task
    from robo_reward_ros.recordings.lerobot_dataset import LeRobotFolder, choose_keys, merged_frames
    from robo_reward_ros.replay.offline_replay import OfflineReplay, model_info, offline_parameter_values
    from robo_reward_ros.replay.scored_episodes import ScoredEpisodes, run_key
    from robo_reward_ros.recordings.trace import write_traces
    if relabel and os.path.exists(relabel):  # before any scoring, not after it
        raise FileExistsError(f"{relabel} exists: choose a new folder for the relabelled copy")
    dataset = LeRobotFolder(dataset_dir)
    if relabel:
        from robo_reward_ros.recordings.lerobot_relabel import refuse_links_out_of
        refuse_links_out_of(dataset.root)
    keys = choose_keys(dataset, keys)
    chosen = [e for e in dataset.episodes if episodes is None or e.index in set(episodes)]
    if not chosen:
        raise ValueError(f"{dataset_dir}: no episode {list(episodes or [])} in the dataset")
    values, tiny = offline_parameter_values(model, backend, precision, device, params, log)
    run = run_key(values, {"lerobot_keys": list(keys)})
    scored = ScoredEpisodes(out, force)
    replayer = OfflineReplay(values)
    traces, by_index, reused = [], {}, 0
    try:
        bar = tqdm(total=sum(e.length for e in chosen) * len(keys), unit="frame", desc="frames",
                   disable=not progress_bar)
        for episode in tqdm(chosen, unit="episode", desc="episodes", position=1, disable=not progress_bar):
            name = f"{dataset.name}_ep{episode.index:06d}"
            key = _episode_key(run, dataset, episode, keys)
            trace = scored.load(name, key)
            if trace is None:
                task = build_task([dataset.instruction(episode)])
                frames = ((stamp, camera, rgb) for stamp, camera, rgb in merged_frames(dataset, episode, keys))
                trace = replayer.replay_frames(
                    name, task, keys, frames, "lerobot",
                    {"dataset": os.path.abspath(dataset_dir), "episode_index": episode.index},
                    on_frame=lambda: bar.update(1))
                scored.store(trace, key)
            else:
                reused += 1
            traces.append(trace)
            by_index[episode.index] = trace
        bar.close()
    finally:
        replayer.close()
    info = {**model_info(values, tiny),
            "parameters": {p.partition("=")[0]: p.partition("=")[2] for p in params},
            "dataset": os.path.abspath(dataset_dir), "camera_keys": list(keys), "mode": "offline"}
    write_traces(traces, out, info)
    summary = {"out": out, "episodes": len(traces), "reused": reused, "scored": len(traces) - reused,
               "model": info["model_description"],
               "estimates": sum(len(t.estimates) for t in traces)}
    if relabel:
        from robo_reward_ros.recordings.lerobot_relabel import write_relabelled
        summary["relabelled"] = write_relabelled(dataset, by_index, relabel, relabel_fill)
        summary["relabel"] = relabel
    if plots:
        from robo_reward_ros.replay.replay_run import write_plots
        summary["plots"] = write_plots(out, " - tiny random model" if tiny else "")
    return summary
