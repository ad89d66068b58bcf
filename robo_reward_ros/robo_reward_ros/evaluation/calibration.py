# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Choose a model's monitor settings from labelled episodes (what ``robo-reward calibrate`` runs).

The model scores each episode once, with a monitor that never ends it (SCORING_PARAMETERS), so
every estimate of the recording is there. Each candidate setting then replays only the ROS-free
task monitor over those estimates: a sweep costs seconds, not a model run per candidate.

The sweep is coordinate-wise, in a fixed order: the success threshold (on the success probability,
or on progress for a backend without a success head), then k-of-n, each chosen for the best
success-detection F1 on the validation split; then each failure setting in turn for the best
failure-detection F1, the others held at their values so far. Among equal F1s the middle candidate
in grid order wins (for a threshold: the middle of the plateau, the widest margin either side).
F1 as ``robo-reward eval`` defines it (evaluation/scoring.py): success detection over episodes
with an outcome, failure detection (any task failure event) over successes and failures.

Only one-stage episodes are used: with the stage never ending while scoring, a later stage's
windows were never scored.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from robo_reward_ros.core.events import EpisodeEnded, FailureDetected, RewardEstimate, StageSucceeded, TaskStatus
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task
from robo_reward_ros.evaluation.metrics import detection_scores
from robo_reward_ros.settings.node_settings import monitor_config

# Node parameters while the model scores the episodes: no success can be declared (100 votes of
# 100 at probability 1), no time limit, no failure ends the episode.
SCORING_PARAMETERS = ("success.threshold=1.0", "success.progress_threshold=1.0", "success.k=100",
                      "success.n=100", "timeout.episode_sec=0", "timeout.stage_sec=0",
                      'failure.terminal_kinds=""', "operator.confirm_decisions=false")
THRESHOLDS = tuple(float(v) for v in np.round(np.linspace(0.05, 1.0, 20), 2))
VOTES = ((1, 1), (2, 2), (2, 3), (3, 3), (3, 5))
FAILURE_GRID = (
    ("failure.stall_window_sec", (3.0, 5.0, 8.0, 10.0, 15.0, 20.0, 30.0)),
    ("failure.stall_min_delta", (0.02, 0.05, 0.1, 0.15)),
    ("failure.regression_margin", (0.1, 0.15, 0.2, 0.25, 0.3, 0.4)),
    ("failure.regression_hold_sec", (0.5, 1.0, 2.0, 3.0)),
    ("failure.low_progress_floor", (0.05, 0.1, 0.15, 0.2, 0.3)),
    ("failure.low_progress_grace_sec", (3.0, 5.0, 10.0, 15.0, 20.0)),
)
OUTCOMES = ("success", "partial", "failure")


@dataclasses.dataclass(frozen=True)
class LabelledEpisode:
    name: str
    outcome: str  # success, partial or failure
    instruction: str
    start: float  # the first frame's stamp: where the node's episode starts
    steps: Tuple[Tuple[RewardEstimate, ...], ...]  # the estimates of each inference step

    @property
    def has_success_head(self) -> bool:
        return any(e.success_prob is not None for step in self.steps for e in step)


def labelled_episodes(data: Dict[str, Any]) -> Tuple[List[LabelledEpisode], List[str]]:
    """Return the replay's episodes the sweep can use, and why each other one is left out."""
    kept, skipped = [], []
    for summary in data["episodes"]:
        name = summary["name"]
        records = data["estimates"].get(name, [])
        decided = [e for e in data["events"].get(name, []) if e["type"] == "episode_ended"
                   and e.get("status") in ("succeeded", "failed", "timed_out")]
        why = ("no outcome label" if summary.get("outcome") not in OUTCOMES else
               f"{len(summary['instructions'])} stages (only one-stage episodes are used)"
               if len(summary["instructions"]) != 1 else
               "no estimates" if not records else
               f"ended {decided[0]['status']} at {decided[0]['stamp']:.1f} s while scored, so its later "
               "estimates are missing (score with calibrate, or replay with its scoring parameters)"
               if decided else "")
        if why:
            skipped.append(f"{name}: {why}")
            continue
        stamps = summary.get("stamps") or [min(records[0]["frame_stamps"])]
        kept.append(LabelledEpisode(name, summary["outcome"], summary["instructions"][0],
                                    float(stamps[0]), _steps(records)))
    return kept, skipped


def _steps(records: Sequence[Dict[str, Any]]) -> Tuple[Tuple[RewardEstimate, ...], ...]:
    """Group the estimates of one inference step (one per camera, written one after another)."""
    steps: List[List[RewardEstimate]] = []
    for record in records:
        estimate = RewardEstimate(stamp=record["stamp"], camera=record.get("camera") or "camera",
                                  progress=record["frame_progress"], frame_stamps=record["frame_stamps"],
                                  success_prob=record["frame_success"] or None)
        if not steps or any(e.camera == estimate.camera for e in steps[-1]):
            steps.append([])
        steps[-1].append(estimate)
    return tuple(tuple(step) for step in steps)


def split(episodes: Sequence[LabelledEpisode], test_fraction: float, seed: int = 0
          ) -> Tuple[List[LabelledEpisode], List[LabelledEpisode]]:
    """Split into (validation, test), each outcome in the same proportion (a seeded shuffle per outcome)."""
    if not 0.0 <= test_fraction < 1.0:
        raise ValueError(f"the test fraction must be in [0, 1), got {test_fraction}")
    rng = np.random.default_rng(seed)
    validation, test = [], []
    for outcome in OUTCOMES:
        group = sorted((e for e in episodes if e.outcome == outcome), key=lambda e: e.name)
        order = rng.permutation(len(group))
        held = int(round(test_fraction * len(group)))
        test += [group[i] for i in order[:held]]
        validation += [group[i] for i in order[held:]]
    return validation, test


def cameras_of(episodes: Sequence[LabelledEpisode]) -> List[str]:
    seen: Dict[str, None] = {}
    for episode in episodes:
        for step in episode.steps:
            for estimate in step:
                seen.setdefault(estimate.camera)
    return list(seen) or ["camera"]


def detections(episodes: Sequence[LabelledEpisode], values: Dict[str, Any], cameras: Sequence[str]
               ) -> Tuple[List[bool], List[bool]]:
    """Replay the monitor with these node parameter values: (success declared, task failure seen) per episode."""
    config = monitor_config({**values, "episode_log.directory": ""}, cameras)
    success, failure = [], []
    for episode in episodes:
        monitor = TaskMonitor(config)
        monitor.start_episode(build_task([episode.instruction]), episode.start, episode_id=episode.name)
        succeeded = failed = False
        for step in episode.steps:
            for event in monitor.update_step(step).events:
                succeeded |= isinstance(event, StageSucceeded) or (
                    isinstance(event, EpisodeEnded) and event.status == TaskStatus.SUCCEEDED)
                failed |= isinstance(event, FailureDetected) and event.task_failure
            if not monitor.running:
                break
        monitor.close()
        success.append(succeeded)
        failure.append(failed)
    return success, failure


def scores(episodes: Sequence[LabelledEpisode], values: Dict[str, Any], cameras: Sequence[str]) -> Dict[str, Any]:
    """Success and failure detection (precision, recall, F1, counts) as ``robo-reward eval`` reports them."""
    success, failure = detections(episodes, values, cameras)
    decided = [i for i, e in enumerate(episodes) if e.outcome in ("success", "failure")]
    return {"episodes": len(episodes),
            "success_detection": detection_scores(success, [e.outcome == "success" for e in episodes]),
            "failure_detection": detection_scores([failure[i] for i in decided],
                                                  [episodes[i].outcome == "failure" for i in decided])}


def _f1(result: Dict[str, Any], which: str) -> Optional[float]:
    return result[f"{which}_detection"]["f1"]


def _best(trials: List[Tuple[Dict[str, Any], Optional[float]]]) -> Optional[Dict[str, Any]]:
    """Return the candidate with the highest F1 (the middle one of equals, in grid order); None if no F1 is defined."""
    defined = [f1 for _, f1 in trials if f1 is not None]
    if not defined:
        return None
    top = max(defined)
    tied = [candidate for candidate, f1 in trials if f1 is not None and f1 >= top - 1e-12]
    return tied[(len(tied) - 1) // 2]


@dataclasses.dataclass
class Calibration:
    chosen: Dict[str, Any]  # the calibrated node parameters and their values
    values: Dict[str, Any]  # every parameter value with the chosen ones in
    trials: List[Dict[str, Any]]  # every candidate tried: parameters, validation F1
    not_calibrated: List[str]  # why a setting kept its value (no F1 defined on the validation split)


def calibrate(validation: Sequence[LabelledEpisode], values: Dict[str, Any],
              progress: Optional[Callable[[int], Any]] = None) -> Calibration:
    """Sweep on the validation split from ``values`` (the node's parameter values); see the module docstring.

    ``progress``: called with the number of candidates, returns an object with ``update(n)``
    (a tqdm bar), or None.
    """
    if not validation:
        raise ValueError("no labelled episode in the validation split")
    cameras = cameras_of(validation)
    threshold = "success.threshold" if any(e.has_success_head for e in validation) else "success.progress_threshold"
    coordinates: List[Tuple[str, str, List[Dict[str, Any]]]] = [
        ("success", threshold, [{threshold: t} for t in THRESHOLDS]),
        ("success", "success.k/success.n", [{"success.k": k, "success.n": n} for k, n in VOTES]),
    ] + [("failure", name, [{name: v} for v in grid]) for name, grid in FAILURE_GRID]
    bar = progress(sum(len(c) for _, _, c in coordinates)) if progress else None
    current, chosen, trials, skipped = dict(values), {}, [], []
    for which, label, candidates in coordinates:
        tried = []
        for candidate in candidates:
            f1 = _f1(scores(validation, {**current, **candidate}, cameras), which)
            tried.append((candidate, f1))
            trials.append({**candidate, f"validation_{which}_f1": f1})
            if bar is not None:
                bar.update(1)
        best = _best(tried)
        if best is None:
            skipped.append(f"{label}: no {which}-detection F1 on the validation split (it needs an "
                           f"episode labelled {which} and a candidate that detects one); kept as it was")
            continue
        current.update(best)
        chosen.update(best)
    return Calibration(chosen, current, trials, skipped)
