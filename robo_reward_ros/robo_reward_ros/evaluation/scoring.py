# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The evaluation of a replay: per-episode numbers, then the metrics of evaluation/metrics.py over episodes and tasks.

Definitions in docs/offline-evaluation.md.

Per episode (from its estimates, i.e. what the node published, in order):
- progress trace: the newest frame's progress of each estimate (Robometer's "frame steps" mode:
  each growing window contributes its last element); its truth: the progress label of the
  newest frame scored;
- trajectory reward: task progress at the last estimate, ``(stage + progress) / stages``;
- partial success (truth): 1 for a success, else ``(stage + progress label) / stages`` at the
  last frame.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from robo_reward_ros.evaluation import metrics


def episode_rows(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    rows = []
    for summary in data["episodes"]:
        name = summary["name"]
        estimates = data["estimates"].get(name, [])
        stages = max(1, len(summary["instructions"]))
        row = {k: summary.get(k) for k in ("name", "task", "outcome", "failure_kind", "source",
                                           "gt_success_stamp", "gt_failure_stamp")}
        row["estimates"] = len(estimates)
        progress = [e["progress"] for e in estimates]
        row["trajectory_reward"] = ((estimates[-1]["stage"] + estimates[-1]["progress"]) / stages
                                    if estimates else None)
        row["final_progress"] = progress[-1] if progress else None
        truth = [e["gt_progress"] for e in estimates]
        has_truth = bool(estimates) and all(t is not None for t in truth)
        row["voc_pearson"] = metrics.voc_pearson(truth, progress) if has_truth else None
        row["voc_spearman_time"] = metrics.voc_spearman_time(progress) if progress else None
        if summary.get("gt_progress"):
            last_stage = summary["gt_stage"][-1]
            row["partial_success"] = (1.0 if summary["outcome"] == "success" else
                                      (last_stage + summary["gt_progress"][-1]) / stages)
        else:
            row["partial_success"] = 1.0 if summary.get("outcome") == "success" else None
        row["detected_success_stamp"] = summary.get("detected_success_stamp")
        failure = summary.get("first_failure")
        row["first_failure_kind"] = failure["kind"] if failure else ""
        row["first_failure_stamp"] = failure["stamp"] if failure else None
        rows.append(row)
    return rows


def success_delay(row: Dict[str, Any]) -> Optional[float]:
    """Seconds from the truth's success to the node's declaration (negative: early), None when either is missing."""
    if row.get("detected_success_stamp") is None or row.get("gt_success_stamp") is None:
        return None
    return row["detected_success_stamp"] - row["gt_success_stamp"]


def failure_delay(row: Dict[str, Any]) -> Optional[float]:
    """Seconds from the truth's failure onset to the node's first task-failure event, None when either is missing."""
    if row.get("first_failure_stamp") is None or row.get("gt_failure_stamp") is None:
        return None
    return row["first_failure_stamp"] - row["gt_failure_stamp"]


class PairJudgements(NamedTuple):
    """A pairwise judge on pairs of clips: its answer, the truth, and its own pointwise scores of both."""

    prob_a_better: List[float]
    a_is_better: List[bool]
    score_a: List[float]
    score_b: List[float]


def evaluate(rows: Sequence[Dict[str, Any]],
             preference: Optional[PairJudgements] = None) -> Dict[str, Any]:
    judged = [r for r in rows if r.get("outcome") and r["trajectory_reward"] is not None]
    successful = [r for r in judged if r["outcome"] == "success"]
    by_task: Dict[str, Dict[str, List[float]]] = defaultdict(
        lambda: {"success": [], "partial": [], "failure": []})
    for row in judged:
        by_task[row["task"]][row["outcome"]].append(row["trajectory_reward"])
    kendall = {task: metrics.kendall_across_outcomes(r) for task, r in by_task.items()}
    diffs = {task: metrics.outcome_differences(r) for task, r in by_task.items()}
    result: Dict[str, Any] = {
        "episodes": len(rows), "episodes_with_outcome": len(judged),
        "voc_pearson_successful": metrics.mean_or_none(
            [r["voc_pearson"] for r in successful if r["voc_pearson"] is not None]),
        "voc_spearman_time_successful": metrics.mean_or_none(
            [r["voc_spearman_time"] for r in successful if r["voc_spearman_time"] is not None]),
        "kendall_tau_a": metrics.summarize(kendall.values()),
        "kendall_tau_a_per_task": kendall,
        "success_failure_diff": metrics.summarize(d["success_failure"] for d in diffs.values()),
        "success_partial_diff": metrics.summarize(d["success_partial"] for d in diffs.values()),
        "partial_failure_diff": metrics.summarize(d["partial_failure"] for d in diffs.values()),
    }
    scored = [r for r in judged if r["partial_success"] is not None]
    if scored:
        mae, delta = metrics.binned_mae([r["trajectory_reward"] for r in scored],
                                        [r["partial_success"] for r in scored])
        result.update(binned_mae_1_5=mae, partial_success_abs_delta=delta)
    if preference and preference.prob_a_better:
        result["preference_accuracy"] = metrics.preference_accuracy(preference.prob_a_better,
                                                                    preference.a_is_better)
        result["preference_pairs"] = len(preference.prob_a_better)
        result["score_pair_consistency"] = metrics.score_pair_consistency(
            preference.prob_a_better, preference.score_a, preference.score_b)
    # The robot's figures: episode-level success and failure detection.
    result["success_detection"] = metrics.detection_scores(
        [r["detected_success_stamp"] is not None for r in judged],
        [r["outcome"] == "success" for r in judged])
    result["success_detection_delay_s"] = metrics.delay_summary(
        [d for d in map(success_delay, judged) if d is not None])
    decided = [r for r in judged if r["outcome"] in ("success", "failure")]
    result["failure_detection"] = metrics.detection_scores(
        [r["first_failure_stamp"] is not None for r in decided],
        [r["outcome"] == "failure" for r in decided])
    result["failure_detection_delay_s"] = metrics.delay_summary(
        [d for d in map(failure_delay, decided) if d is not None])
    return result


def preference_pairs(rows: Sequence[Dict[str, Any]]) -> List[Tuple[str, str]]:
    """Pairs of the same task with different outcomes, the better one first in every other pair.

    A model that always prefers A or always B then scores 50%.
    """
    pairs = []
    by_task: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("outcome"):
            by_task[row["task"]].append(row)
    for task in sorted(by_task):
        group = by_task[task]
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                a, b = group[i], group[j]
                rank_a, rank_b = (metrics.OUTCOME_RANK[a["outcome"]],
                                  metrics.OUTCOME_RANK[b["outcome"]])
                if rank_a == rank_b:
                    continue
                better, worse = (a, b) if rank_a > rank_b else (b, a)
                pairs.append((better["name"], worse["name"]) if len(pairs) % 2 == 0
                             else (worse["name"], better["name"]))
    return pairs
