# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""An evaluation run: replays merged, metrics computed, reports and plots written.

What ``robo-reward eval`` runs.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Sequence


def merge_replays(folders: Sequence[str]) -> Dict[str, Any]:
    from robo_reward_ros.recordings.trace import read_replay
    merged: Dict[str, Any] = {"episodes": [], "estimates": {}, "events": {}}
    for folder in folders:
        data = read_replay(folder)
        merged["episodes"] += data["episodes"]
        merged["estimates"].update(data["estimates"])
        merged["events"].update(data["events"])
        merged.setdefault("info", {k: v for k, v in data.items()
                                   if k not in ("episodes", "estimates", "events")})
    return merged


def preference_results(rows: List[Dict[str, Any]], data: Dict[str, Any], frames: int):
    """Ask the model both ways on pairs of the same task with different outcomes: which clip, and each clip's score.

    Returns a ``scoring.PairJudgements`` (None without pairs or without a pairwise mode): P(A better)
    and the truth per pair, and each clip's own pointwise score (its newest frame's progress) on the
    same frames, for the score-pair consistency.
    """
    import numpy as np
    from robo_reward_ros.evaluation.scoring import PairJudgements, preference_pairs
    from robo_reward_ros.evaluation.metrics import OUTCOME_RANK
    from robo_reward_ros.models.loading.loader import load_reward_model
    info = data.get("info", {})
    pairs = preference_pairs(rows)
    if not pairs:
        return None
    model = load_reward_model(info["model"], info.get("backend", "auto"),
                              info.get("precision", "fp32"), "cpu")
    try:
        if not model.capabilities.preference:
            return None
        outcome = {r["name"]: r["outcome"] for r in rows}
        instruction = {e["name"]: e["instructions"][0] for e in data["episodes"]}
        clips, scores = {}, {}

        summaries = {e["name"]: e for e in data["episodes"]}

        def clip(name):
            if name not in clips:
                every = _episode_frames(summaries[name], info)
                picks = np.linspace(0, len(every) - 1, frames).round().astype(int)
                clips[name] = [every[i] for i in sorted(set(picks.tolist()))]
            return clips[name]

        def score(name):
            if name not in scores:
                model.reset()
                scores[name] = float(model.score(instruction[name], clip(name)).progress[-1])
            return scores[name]

        from tqdm import tqdm
        judged = PairJudgements([], [], [], [])
        # A pair takes a second or more on a CPU: a bar, not a silent minute.
        for a, b in tqdm(pairs, desc="preference pairs", unit="pair", mininterval=1.0):
            model.reset()
            judged.prob_a_better.append(float(model.prefer(instruction[a], clip(a), clip(b))))
            judged.a_is_better.append(OUTCOME_RANK[outcome[a]] > OUTCOME_RANK[outcome[b]])
            judged.score_a.append(score(a))
            judged.score_b.append(score(b))
        return judged
    finally:
        model.close()


def _episode_frames(summary: Dict[str, Any], info: Dict[str, Any]) -> list:
    """Read an episode's frames again: from the project's own bag, or a robot's recording read as replay read it."""
    if summary.get("source") != "rosbag2":
        from robo_reward_ros.recordings.episode_bag import read_episode_bag
        return read_episode_bag(summary["bag"]).frames
    from robo_reward_ros.settings.parameter_table import SPECS
    from robo_reward_ros.recordings.robot_recording import RecordingOptions, episode_frames
    reading = info.get("reading") or {}
    options = RecordingOptions(tuple(reading.get("camera_topics") or ()), reading.get("instruction", ""),
                               reading.get("instruction_topic", ""), reading.get("task_file", ""),
                               reading.get("split_topic", ""), float(reading.get("split_gap_sec") or 0.0),
                               reading.get("max_frames"), reading.get("stamps") or "header")
    max_pixels = next(s.default for s in SPECS if s.name == "cameras.max_pixels")
    return episode_frames(summary["bag"], options, max_pixels, summary["info"]["episode_index"])[1]


def run_eval(replays: Sequence[str], out: str, preference: bool = True,
             preference_frames: int = 8, labels: str = "", strict_labels: bool = True) -> Dict[str, Any]:
    """``labels``: a labels file (recordings/episode_labels.py) for episodes whose recordings carry no outcome."""
    from robo_reward_ros.visualisation.plots import plot_summary
    from robo_reward_ros.evaluation.report import markdown_report
    from robo_reward_ros.evaluation.scoring import episode_rows, evaluate
    data = merge_replays(replays)
    unlabelled: List[str] = []
    if labels:
        from robo_reward_ros.recordings.episode_labels import label_replay, load_labels
        unlabelled = label_replay(data, load_labels(labels), labels, strict_labels)
    rows = episode_rows(data)
    pref = preference_results(rows, data, preference_frames) if preference else None
    result = evaluate(rows, pref)
    os.makedirs(out, exist_ok=True)
    info = data.get("info", {})
    plot = plot_summary(rows, os.path.join(out, "summary.png"),
                        "tiny random model" if info.get("tiny_random_model") else "")
    with open(os.path.join(out, "metrics.json"), "w") as handle:
        json.dump({"metrics": result, "episodes": rows, "replay": info, "labels": labels or None},
                  handle, indent=1)
    with open(os.path.join(out, "report.md"), "w") as handle:
        handle.write(markdown_report(result, rows, info, [os.path.basename(plot)]))
    return {"metrics": result, "rows": rows, "out": out, "unlabelled": unlabelled}
