# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Reward-model quality metrics, with the definitions of the published evaluations.

docs/offline-evaluation.md lists them with their sources. Pure functions on numbers: no ROS, no
model. Statistics from scipy.

Conventions: NaN inputs are the caller's bug (ValueError); a metric that is undefined for its
input (a constant sequence has no correlation) returns the documented fallback (0 for VOC, as
the reference ``VOCMetric`` does) or None where no fallback is defined (precision with no
positive decision).
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple

import numpy as np

# Gold ranks of outcome quality (Robometer's Kendall evaluation: failure < suboptimal < success).
OUTCOME_RANK = {"failure": 1, "partial": 2, "success": 3}


def _finite(values: Sequence[float], what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{what} must be a 1-D sequence")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what} holds a non-finite value")
    return array


def voc_pearson(target: Sequence[float], predicted: Sequence[float]) -> float:
    """Robometer's VOC analogue: Pearson correlation of predicted progress with the target progress of one trajectory.

    0 when undefined (fewer than 2 points or a constant side).
    """
    from scipy.stats import pearsonr
    x, y = _finite(target, "target"), _finite(predicted, "predicted")
    if x.shape != y.shape:
        raise ValueError(f"target has {x.size} values, predicted {y.size}")
    if x.size < 2 or np.ptp(x) == 0.0 or np.ptp(y) == 0.0:
        return 0.0
    value = float(pearsonr(x, y)[0])
    return 0.0 if math.isnan(value) else value


def voc_spearman_time(predicted: Sequence[float]) -> float:
    """GVL/TOPReward VOC: Spearman correlation of chronological predictions with time order; 0 when undefined.

    Time order as ground truth: ``round(100 * i / (T - 1))``.
    """
    from scipy.stats import spearmanr
    y = _finite(predicted, "predicted")
    if y.size < 2 or np.ptp(y) == 0.0:
        return 0.0
    order = np.round(100.0 * np.arange(y.size) / (y.size - 1))
    value = float(spearmanr(y, order)[0])
    return 0.0 if math.isnan(value) else value


def kendall_tau_a(x: Sequence[float], y: Sequence[float]) -> float:
    """``(C - D) / (n (n - 1) / 2)``: pairs tied in either sequence count as neither concordant nor discordant.

    They stay in the denominator (unlike scipy's tau-b).
    """
    a, b = _finite(x, "x"), _finite(y, "y")
    if a.shape != b.shape:
        raise ValueError("x and y differ in length")
    n = a.size
    if n < 2:
        raise ValueError("Kendall tau needs at least 2 pairs")
    signs = np.sign(a[:, None] - a[None, :]) * np.sign(b[:, None] - b[None, :])
    return float(np.triu(signs, k=1).sum() / (n * (n - 1) / 2))


def kendall_across_outcomes(rewards: Mapping[str, Sequence[float]]) -> Optional[float]:
    """One task's Kendall tau_a between gold outcome ranks and trajectory rewards.

    Averaged over every pick of one trajectory per outcome label. ``rewards`` maps outcome ->
    rewards of that task's trajectories; None when fewer than 2 labels are present.
    """
    labels = sorted((label for label, values in rewards.items() if len(values)),
                    key=lambda label: OUTCOME_RANK[label])
    if len(labels) < 2:
        return None
    gold = [OUTCOME_RANK[label] for label in labels]
    taus = [kendall_tau_a(gold, pick)
            for pick in itertools.product(*(rewards[label] for label in labels))]
    return float(np.mean(taus))


def outcome_differences(rewards: Mapping[str, Sequence[float]]) -> Dict[str, Optional[float]]:
    """One task's mean reward differences: success - failure, success - partial, partial - failure.

    None where a side has no trajectory.
    """
    means = {label: float(np.mean(_finite(values, label))) if len(values) else None
             for label, values in rewards.items()}

    def diff(a: str, b: str) -> Optional[float]:
        if means.get(a) is None or means.get(b) is None:
            return None
        return means[a] - means[b]

    return {"success_failure": diff("success", "failure"),
            "success_partial": diff("success", "partial"),
            "partial_failure": diff("partial", "failure")}


def summarize(values: Iterable[Optional[float]]) -> Dict[str, Optional[float]]:
    """Mean, min and max over tasks of the defined values (Nones skipped); n = how many."""
    kept = [float(v) for v in values if v is not None]
    if not kept:
        return {"mean": None, "min": None, "max": None, "n": 0}
    return {"mean": float(np.mean(kept)), "min": min(kept), "max": max(kept), "n": len(kept)}


def bin_1_to_5(value: float) -> int:
    """Return RoboRewardBench's discrete score: ``round(clip(x, 0, 1) * 4)`` on 0..4, reported on the 1-5 scale (+1).

    Python's round: half to even.
    """
    if not math.isfinite(value):
        raise ValueError("cannot bin a non-finite value")
    return int(round(min(1.0, max(0.0, float(value))) * 4)) + 1


def binned_mae(predicted: Sequence[float], gold: Sequence[float]) -> Tuple[float, float]:
    """(mean |bin(pred) - bin(gold)| on the 1-5 scale, mean |pred - gold|) over trajectories.

    ``pred`` is the last predicted progress and ``gold`` the partial-success label.
    """
    p, g = _finite(predicted, "predicted"), _finite(gold, "gold")
    if p.shape != g.shape or p.size == 0:
        raise ValueError("predicted and gold must be non-empty and of equal length")
    bins = np.abs(np.array([bin_1_to_5(v) for v in p]) - np.array([bin_1_to_5(v) for v in g]))
    return float(bins.mean()), float(np.abs(p - g).mean())


def preference_accuracy(prob_a_better: Sequence[float], a_is_better: Sequence[bool]) -> float:
    """``mean(1[p > 0.5] == label)`` over pairs (Robometer's preference accuracy)."""
    p = _finite(prob_a_better, "prob_a_better")
    labels = np.asarray(a_is_better, dtype=bool)
    if p.shape != labels.shape or p.size == 0:
        raise ValueError("probabilities and labels must be non-empty and of equal length")
    return float(np.mean((p > 0.5) == labels))


def score_pair_consistency(prob_a_better: Sequence[float], score_a: Sequence[float],
                           score_b: Sequence[float]) -> Dict[str, Any]:
    """How often a judge's pairwise answer prefers the clip its own pointwise score ranks higher.

    TrustRoboReward's score-pair consistency (reward-models.md 4a). A pair whose two scores are
    equal, or whose answer is exactly 0.5, orders nothing: it is counted as a tie, not judged.
    """
    p = _finite(prob_a_better, "prob_a_better")
    a, b = _finite(score_a, "score_a"), _finite(score_b, "score_b")
    if not p.shape == a.shape == b.shape:
        raise ValueError("probabilities and both scores must be of equal length")
    ordered = (a != b) & (p != 0.5)
    agree = (p[ordered] > 0.5) == (a[ordered] > b[ordered])
    return {"consistency": float(agree.mean()) if agree.size else None,
            "pairs": int(p.size), "judged": int(ordered.sum()), "ties": int(p.size - ordered.sum())}


def detection_scores(detected: Sequence[bool], actual: Sequence[bool]) -> Dict[str, Optional[float]]:
    """Episode-level detection: precision, recall, F1 and the counts.

    Precision is None with no detection, recall None with no actual positive; F1 is None unless both
    are defined (0 when both are 0).
    """
    d, a = np.asarray(detected, dtype=bool), np.asarray(actual, dtype=bool)
    if d.shape != a.shape:
        raise ValueError("detected and actual differ in length")
    tp, fp, fn = int(np.sum(d & a)), int(np.sum(d & ~a)), int(np.sum(~d & a))
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn,
            "tn": int(np.sum(~d & ~a))}


def delay_summary(delays: Sequence[float]) -> Dict[str, Optional[float]]:
    """Summarize detection delays in seconds: mean, median, max and how many were early.

    A delay is detection stamp - ground-truth onset; negative: detected before the onset.
    """
    values = _finite(delays, "delays") if len(delays) else np.zeros(0)
    if values.size == 0:
        return {"mean": None, "median": None, "max": None, "n": 0, "early": 0}
    return {"mean": float(values.mean()), "median": float(np.median(values)),
            "max": float(values.max()), "n": int(values.size), "early": int(np.sum(values < 0))}


def mean_or_none(values: Sequence[float]) -> Optional[float]:
    values = list(values)
    return float(np.mean(values)) if values else None
