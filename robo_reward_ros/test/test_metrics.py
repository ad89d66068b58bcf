# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Each metric against values worked out by hand on small fixed inputs (evaluation/metrics.py)."""
import math

import pytest

from robo_reward_ros.evaluation import metrics

pytest.importorskip("scipy", reason="scipy is not installed")


def test_voc_pearson_matches_hand_values():
    # x = [0, 1, 2], y = [1, 0, 2]: deviations (-1, 0, 1) and (0, -1, 1); cov 1, variances 2, 2.
    assert metrics.voc_pearson([0, 1, 2], [1, 0, 2]) == pytest.approx(0.5)
    assert metrics.voc_pearson([0, 1, 2, 3], [0.0, 0.2, 0.4, 0.6]) == pytest.approx(1.0)
    assert metrics.voc_pearson([0, 1, 2], [2, 1, 0]) == pytest.approx(-1.0)
    # Undefined (a constant side, one point): 0, as the reference VOCMetric maps NaN.
    assert metrics.voc_pearson([0, 1, 2], [0.5, 0.5, 0.5]) == 0.0
    assert metrics.voc_pearson([1.0], [0.3]) == 0.0


def test_voc_spearman_with_time_matches_hand_value():
    # Ranks of [0.1, 0.3, 0.2, 0.4] are [1, 3, 2, 4] against time [1, 2, 3, 4]:
    # sum d^2 = 2, rho = 1 - 6 * 2 / (4 * 15) = 0.8.
    assert metrics.voc_spearman_time([0.1, 0.3, 0.2, 0.4]) == pytest.approx(0.8)
    assert metrics.voc_spearman_time([0.9, 0.5, 0.1]) == pytest.approx(-1.0)
    assert metrics.voc_spearman_time([0.2, 0.2, 0.2]) == 0.0


def test_kendall_tau_a_counts_ties_in_the_denominator():
    # Pairs of [1, 2, 3, 4] vs [1, 3, 2, 2]: (1,2) C, (1,3) C, (1,4) C, (2,3) D, (2,4) D,
    # (3,4) tied in y: neither. (3 - 2) / 6.
    assert metrics.kendall_tau_a([1, 2, 3, 4], [1, 3, 2, 2]) == pytest.approx(1 / 6)
    with pytest.raises(ValueError):
        metrics.kendall_tau_a([1], [1])


def test_kendall_across_outcomes_averages_every_pick():
    # Picks (failure 0.1, success 0.4): concordant, tau 1; (0.5, 0.4): discordant, -1. Mean 0.
    assert metrics.kendall_across_outcomes(
        {"failure": [0.1, 0.5], "success": [0.4]}) == pytest.approx(0.0)
    # Gold 1, 2, 3 vs rewards 0.1, 0.3, 0.2: C, C, D -> 1/3.
    assert metrics.kendall_across_outcomes(
        {"success": [0.2], "partial": [0.3], "failure": [0.1]}) == pytest.approx(1 / 3)
    assert metrics.kendall_across_outcomes({"success": [0.2, 0.9], "failure": []}) is None


def test_outcome_differences_and_their_summary_over_tasks():
    diffs = metrics.outcome_differences({"success": [0.8, 0.6], "failure": [0.2], "partial": []})
    assert diffs["success_failure"] == pytest.approx(0.5)
    assert diffs["success_partial"] is None and diffs["partial_failure"] is None
    summary = metrics.summarize([0.5, None, -0.1])
    assert summary == {"mean": pytest.approx(0.2), "min": -0.1, "max": 0.5, "n": 2}
    assert metrics.summarize([None])["mean"] is None


def test_binned_mae_on_the_1_to_5_scale_rounds_half_to_even():
    # 0.375 * 4 = 1.5 -> 2 (half to even) -> 3; 0.625 * 4 = 2.5 -> 2 -> 3; 0.125 * 4 = 0.5 -> 0 -> 1.
    assert [metrics.bin_1_to_5(v) for v in (0.375, 0.625, 0.125, 1.2, -0.1)] == [3, 3, 1, 5, 1]
    # Bins [3, 5] vs [3, 3]: MAE (0 + 2) / 2 = 1; raw |delta| (0.25 + 0.4) / 2 = 0.325.
    mae, delta = metrics.binned_mae([0.375, 0.9], [0.625, 0.5])
    assert mae == pytest.approx(1.0) and delta == pytest.approx(0.325)


def test_preference_accuracy_thresholds_at_one_half():
    # 0.7 > 0.5 == True (right), 0.4 -> False != True (wrong), 0.5 -> False == False (right).
    assert metrics.preference_accuracy([0.7, 0.4, 0.5], [True, True, False]) == pytest.approx(2 / 3)


def test_detection_scores_and_delays():
    scores = metrics.detection_scores([True, True, False, False, True],
                                      [True, False, True, False, True])
    assert (scores["tp"], scores["fp"], scores["fn"], scores["tn"]) == (2, 1, 1, 1)
    assert scores["precision"] == pytest.approx(2 / 3)
    assert scores["recall"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx(2 / 3)
    none = metrics.detection_scores([False, False], [True, False])
    assert none["precision"] is None and none["recall"] == 0.0 and none["f1"] is None
    delays = metrics.delay_summary([0.5, -0.2, 1.0])
    assert delays["mean"] == pytest.approx(1.3 / 3) and delays["median"] == pytest.approx(0.5)
    assert delays["max"] == pytest.approx(1.0) and delays["early"] == 1 and delays["n"] == 3
    assert metrics.delay_summary([])["mean"] is None


def test_non_finite_input_is_refused():
    with pytest.raises(ValueError):
        metrics.voc_pearson([0, 1], [0, math.nan])
    with pytest.raises(ValueError):
        metrics.bin_1_to_5(math.inf)
