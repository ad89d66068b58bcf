# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""How far the live node and the offline replay of the same episodes agree.

Three levels, per episode and pooled:
- model: the offline model re-scores the exact window each live estimate reports (its frame
  stamps), and the per-frame progress / success probabilities are compared (max |difference|):
  the same frames must give the same numbers;
- trace: the live progress against the offline progress in force at the same stamp (the newest
  offline estimate at or before it): mean |difference|. The node steps on wall time, the replay
  on frame time, so the windows differ a little;
- decisions: the same episode outcome (task success declared or not; first task-failure kind)
  and the difference of the decision stamps.
"""
from __future__ import annotations

import bisect
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from robo_reward_ros.recordings.trace import EpisodeTrace


def _window(trace: EpisodeTrace, stamps: Sequence[float], tolerance: float = 2e-3):
    frames = trace.episode.frames
    times = [f.stamp for f in frames]
    chosen = []
    for stamp in stamps:
        index = _nearest(times, stamp)
        if abs(times[index] - stamp) > tolerance:
            return None
        chosen.append(frames[index])
    return chosen


def _nearest(times: List[float], stamp: float) -> int:
    i = bisect.bisect_left(times, stamp)
    candidates = [j for j in (i - 1, i) if 0 <= j < len(times)]
    return min(candidates, key=lambda j: abs(times[j] - stamp))


def compare_episode(offline: EpisodeTrace, live: EpisodeTrace, model=None) -> Dict[str, Any]:
    result: Dict[str, Any] = {"episode": offline.episode.name,
                              "live_estimates": len(live.estimates),
                              "offline_estimates": len(offline.estimates)}
    # Model level.
    if model is not None and live.estimates:
        progress_diffs, success_diffs, rescored = [], [], 0
        for estimate in live.estimates:
            frames = _window(live, estimate.frame_stamps)
            if frames is None:
                continue
            model.reset()
            output = model.score(live.episode.instructions[estimate.stage], frames)
            if len(output.progress) != len(estimate.frame_progress):
                continue
            rescored += 1
            progress_diffs.append(float(np.max(np.abs(
                np.asarray(output.progress) - np.asarray(estimate.frame_progress)))))
            if output.success is not None and estimate.frame_success:
                success_diffs.append(float(np.max(np.abs(
                    np.asarray(output.success) - np.asarray(estimate.frame_success)))))
        result.update(windows_rescored=rescored,
                      model_max_abs_progress_diff=max(progress_diffs) if progress_diffs else None,
                      model_max_abs_success_diff=max(success_diffs) if success_diffs else None)
    # Trace level.
    offline_stamps = [e.stamp for e in offline.estimates]
    diffs = []
    for estimate in live.estimates:
        index = bisect.bisect_right(offline_stamps, estimate.stamp + 1e-6) - 1
        if index >= 0:
            diffs.append(abs(estimate.progress - offline.estimates[index].progress))
    result["trace_mean_abs_progress_diff"] = float(np.mean(diffs)) if diffs else None
    same_windows = {tuple(round(s, 3) for s in e.frame_stamps) for e in offline.estimates}
    result["live_windows_also_scored_offline"] = sum(
        1 for e in live.estimates if tuple(round(s, 3) for s in e.frame_stamps) in same_windows)
    # Decision level.
    off_success, live_success = offline.succeeded_stamp, live.succeeded_stamp
    off_failure, live_failure = offline.first_failure, live.first_failure
    result.update(
        offline_success=off_success is not None, live_success=live_success is not None,
        success_stamp_diff=(None if off_success is None or live_success is None
                            else live_success - off_success),
        offline_first_failure=off_failure.kind if off_failure else "",
        live_first_failure=live_failure.kind if live_failure else "",
        failure_stamp_diff=(None if off_failure is None or live_failure is None
                            else live_failure.stamp - off_failure.stamp))
    result["same_decisions"] = (result["offline_success"] == result["live_success"]
                                and result["offline_first_failure"] == result["live_first_failure"])
    return result


def compare(offline: Sequence[EpisodeTrace], live: Sequence[EpisodeTrace],
            model=None) -> Dict[str, Any]:
    by_name = {t.episode.name: t for t in live}
    episodes = [compare_episode(t, by_name[t.episode.name], model)
                for t in offline if t.episode.name in by_name]

    def pooled(key: str, reduce) -> Optional[float]:
        values = [e[key] for e in episodes if e.get(key) is not None]
        return float(reduce(values)) if values else None

    return {
        "episodes": episodes,
        "same_decisions": sum(1 for e in episodes if e["same_decisions"]),
        "compared": len(episodes),
        "model_max_abs_progress_diff": pooled("model_max_abs_progress_diff", max),
        "model_max_abs_success_diff": pooled("model_max_abs_success_diff", max),
        "windows_rescored": sum(e.get("windows_rescored", 0) for e in episodes),
        "live_estimates": sum(e["live_estimates"] for e in episodes),
        "trace_mean_abs_progress_diff": pooled("trace_mean_abs_progress_diff", np.mean),
        "max_abs_success_stamp_diff": pooled("success_stamp_diff",
                                             lambda v: max(abs(x) for x in v)),
        "max_abs_failure_stamp_diff": pooled("failure_stamp_diff",
                                             lambda v: max(abs(x) for x in v)),
    }
