# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Configuration validation, camera combination rules, dense reward formulas and the clean start of a new episode."""
import dataclasses
import math
import os
import re

import pytest

from monitor_traces import described, estimate, replay, trace
from ros_fixtures import PACKAGE_ROOT
from robo_reward_ros.core.dense_reward import DenseReward, Outcome, task_potential
from robo_reward_ros.core.events import (
    DecidedBy,
    DenseRewardMode,
    FailureKind,
    RewardEstimate,
    TaskStatus,
)
from robo_reward_ros.core.operator_labels import LabelKind, Verdict
from robo_reward_ros.core.success_detector import CameraRule, SuccessDetector
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task

TASK = build_task(["pick up the cup"])


def _constants(message: str, prefix: str):
    """Return the ``uint8 PREFIX_NAME=value`` constants of a robo_reward_msgs message as (NAME, value)."""
    path = os.path.join(os.path.dirname(PACKAGE_ROOT), "robo_reward_msgs", message)
    with open(path) as handle:
        found = re.findall(rf"^uint8 {prefix}([A-Z_]+)=(\d+)", handle.read(), re.M)
    return [(name, int(value)) for name, value in found]


def test_enum_values_match_the_message_constants():
    assert [(k.name, int(k)) for k in FailureKind] == _constants("msg/FailureEvent.msg", "KIND_") == [
        ("REGRESSION", 1), ("STALL", 2), ("LOW_PROGRESS", 3), ("TIMEOUT", 4),
        ("CAMERA_STALE", 5), ("MODEL_ERROR", 6), ("EPISODE_LOG_ERROR", 7), ("OPERATOR", 8)]
    assert [(s.name, int(s)) for s in TaskStatus] == _constants("msg/TaskState.msg", "STATUS_") == [
        ("IDLE", 0), ("RUNNING", 1), ("STAGE_SUCCEEDED", 2), ("SUCCEEDED", 3), ("FAILED", 4),
        ("TIMED_OUT", 5), ("PENDING", 6)]
    assert [(d.name, int(d)) for d in DecidedBy] == _constants("msg/DecidedBy.msg", "")
    assert [(v.name, int(v)) for v in Verdict] == _constants("msg/OperatorVerdict.msg", "")
    assert [(k.name, int(k)) for k in LabelKind] == _constants("msg/OperatorLabel.msg", "KIND_")
    assert [m.value for m in DenseRewardMode] == ["progress", "delta", "potential"]


@pytest.mark.parametrize("field, value, message", [
    ("success_threshold", 1.5, "success_threshold must be in (0, 1]"),
    ("success_threshold", 0.0, "success_threshold must be in (0, 1]"),
    ("success_k", 4, "success_k must be in [1, success_n]"),
    ("success_k", 0, "success_k must be in [1, success_n]"),
    ("regression_margin", -0.1, "regression_margin must be in (0, 1]"),
    ("regression_hold_s", -1.0, "regression_hold_s must be >= 0"),
    ("stall_window_s", 0.0, "stall_window_s must be a positive number"),
    ("low_progress_floor", 2.0, "low_progress_floor must be in [0, 1]"),
    ("episode_timeout_s", -5.0, "episode_timeout_s must be a positive number"),
    ("camera_stale_after_s", 0.0, "camera_stale_after_s must be a positive number"),
    ("camera_rule", "most", "camera_rule must be one of"),
    ("reward_mode", "sparse", "reward_mode must be one of"),
    ("gamma", 1.2, "gamma must be in (0, 1]"),
    ("sustain_estimates", 0, "sustain_estimates must be an integer >= 1"),
    ("terminal_failures", {"camera_stale"}, "cannot be terminal"),
    ("terminal_failures", {"model_error"}, "cannot be terminal"),
    ("terminal_failures", {"wobble"}, "unknown failure kind"),
])
def test_config_rejects_out_of_range_values(field, value, message):
    # The message names the field and the allowed range (compared literally, not as a regex).
    with pytest.raises(ValueError) as raised:
        MonitorConfig(**{field: value})
    assert message in str(raised.value)


def test_config_accepts_parameter_strings():
    config = MonitorConfig(camera_rule="all", reward_mode="potential",
                           terminal_failures=["regression", 2])
    assert config.camera_rule is CameraRule.ALL
    assert config.reward_mode is DenseRewardMode.POTENTIAL
    assert config.terminal_failures == {FailureKind.REGRESSION, FailureKind.STALL}


def test_estimate_validation():
    with pytest.raises(ValueError, match="non-finite"):
        RewardEstimate(1.0, "cam", [math.nan], [1.0])
    with pytest.raises(ValueError, match="2 progress values but 1 frame stamps"):
        RewardEstimate(1.0, "cam", [0.1, 0.2], [1.0])
    with pytest.raises(ValueError, match="non-decreasing"):
        RewardEstimate(1.0, "cam", [0.1, 0.2], [1.0, 0.5])
    with pytest.raises(ValueError, match="at least one frame"):
        RewardEstimate(1.0, "cam", [], [])


def test_a_stage_threshold_replaces_both_defaults():
    task = build_task(["pick", "place"], success_thresholds=[0.5, 0.0])
    monitor = TaskMonitor(MonitorConfig())
    monitor.start_episode(task, 0.0)
    # Stage 0 at 0.5: success probabilities of 0.55 succeed, and progress 0.6 without a head.
    first = replay(monitor, trace([0.5, 1.0], [0.3, 0.3], [0.55, 0.55]))
    assert described(first) == [("StageSucceeded", 1.0, 0), ("StageAdvanced", 1.0, 1)]
    assert "success probability >= 0.5 in 2 of the last 3" in first[-1].events[0].reason
    # Stage 1 uses the defaults again: 0.55 is no longer a vote.
    second = replay(monitor, [estimate(t, 0.3, 0.55, window_start=1.5) for t in (1.5, 2.0, 2.5)])
    assert described(second) == []
    assert monitor.state.instruction == "place"


@pytest.mark.parametrize("rule, votes, expected", [
    ("any", {"left": True, "right": False, "wrist": False}, True),
    ("majority", {"left": True, "right": False, "wrist": False}, False),
    ("majority", {"left": True, "right": True, "wrist": False}, True),
    ("all", {"left": True, "right": True, "wrist": False}, False),
    ("all", {"left": True, "right": True, "wrist": True}, True),
])
def test_camera_rules(rule, votes, expected):
    detector = SuccessDetector(2, 3, 0.65, 0.9, CameraRule(rule))
    for _ in range(2):
        for camera, high in votes.items():
            detector.vote(camera, 0.9 if high else 0.1, 0.5)
    assert detector.succeeded() is expected


def test_fixed_camera_list_waits_for_a_silent_camera():
    detector = SuccessDetector(2, 3, 0.65, 0.9, CameraRule.ALL, cameras=("left", "right"))
    for _ in range(3):
        detector.vote("left", 0.95, 0.5)
    assert not detector.succeeded()
    detector.vote("right", 0.95, 0.5)
    detector.vote("right", 0.95, 0.5)
    assert detector.succeeded()


def test_two_cameras_in_the_monitor_fuse_progress_and_vote_by_majority():
    monitor = TaskMonitor(MonitorConfig(camera_rule="majority"))
    monitor.start_episode(TASK, 0.0)
    updates = []
    for t in (0.5, 1.0, 1.5):
        updates.append(monitor.update(estimate(t, 0.8, 0.9, camera="wrist")))
        updates.append(monitor.update(estimate(t, 0.4, 0.1, camera="front")))
    assert monitor.state.stage_progress == pytest.approx(0.6)
    assert described(updates) == []  # 1 of 2 cameras is not a majority
    updates = [monitor.update(estimate(t, 0.9, 0.9, camera="front")) for t in (2.0, 2.5)]
    assert described(updates) == [("StageSucceeded", 2.5, 0), ("EpisodeEnded", 2.5, 0,
                                                               "SUCCEEDED")]
    assert set(updates[-1].events[0].cameras) == {"wrist", "front"}


def test_dense_reward_formulas():
    phis = [0.1, 0.3, 0.2, 0.6]
    progress = DenseReward(DenseRewardMode.PROGRESS, 0.9, 1.0, -1.0, 0.0)
    assert [progress.step(p) for p in phis] == pytest.approx(phis)
    delta = DenseReward(DenseRewardMode.DELTA, 0.9, 1.0, -1.0, 0.0)
    assert [delta.step(p) for p in phis] == pytest.approx([0.0, 0.2, -0.1, 0.4])
    potential = DenseReward(DenseRewardMode.POTENTIAL, 0.9, 1.0, -1.0, 0.0)
    rewards = [potential.step(p) for p in phis]
    assert rewards == pytest.approx([0.0, 0.9 * 0.3 - 0.1, 0.9 * 0.2 - 0.3, 0.9 * 0.6 - 0.2])
    # Terminal success: phi of the absorbing state is 0, plus the bonus.
    assert potential.step(1.0, Outcome.SUCCESS) == pytest.approx(0.0 - 0.6 + 1.0)
    # Terminal failure / timeout bonuses are applied and a new episode starts from nothing.
    potential.reset()
    assert potential.episode_return == 0.0
    assert potential.step(0.5) == 0.0
    assert potential.step(None, Outcome.FAILURE) == pytest.approx(0.0 - 0.5 - 1.0)
    delta.reset()
    delta.step(0.4)
    assert delta.step(None, Outcome.TIMEOUT) == pytest.approx(0.0)


def test_potential_shaping_telescopes_with_gamma_one():
    reward = DenseReward(DenseRewardMode.POTENTIAL, 1.0, 1.0, -1.0, 0.0)
    phis = [0.05, 0.2, 0.15, 0.5, 0.7]
    total = sum(reward.step(p) for p in phis) + reward.step(0.9, Outcome.SUCCESS)
    # sum of (phi_t - phi_{t-1}) from t=1, terminal phi = 0, plus the bonus.
    assert total == pytest.approx(-phis[0] + 1.0)


def test_task_potential_spans_all_stages():
    assert task_potential(0, 0.5, 2) == pytest.approx(0.25)
    assert task_potential(1, 0.0, 2) == pytest.approx(0.5)
    assert task_potential(1, 1.7, 2) == pytest.approx(1.0)


def test_monitor_reward_in_potential_mode_over_a_two_stage_success():
    config = MonitorConfig(reward_mode="potential", gamma=1.0, success_bonus=2.0)
    monitor = TaskMonitor(config)
    monitor.start_episode(build_task(["a", "b"]), 0.0)
    rewards = [u.reward for u in replay(monitor, trace([0.5, 1.0, 1.5], [0.2, 0.5, 0.9],
                                                       [0.1, 0.9, 0.9]))]
    # phi: 0.1, 0.25, then the stage success sets phi = 1/2.
    assert rewards == pytest.approx([0.0, 0.15, 0.25])
    rewards = [u.reward for u in replay(monitor, [estimate(t, p, s, window_start=2.0) for t, p, s
                                                  in ((2.0, 0.1, 0.1), (2.5, 0.5, 0.9),
                                                      (3.0, 0.9, 0.9))])]
    assert rewards == pytest.approx([0.05, 0.2, -0.75 + 2.0])
    assert monitor.state.episode_return == pytest.approx(-0.1 + 2.0)


def test_new_episode_starts_clean():
    config = MonitorConfig(regression_margin=0.2, regression_hold_s=0.0, stall_window_s=3.0)
    monitor = TaskMonitor(config)
    monitor.start_episode(TASK, 0.0)
    replay(monitor, trace([0.5, 1.0, 1.5], [0.9, 0.9, 0.8], [0.1, 0.1, 0.9]))  # one vote
    assert monitor.state.best_progress == pytest.approx(0.9)
    ended = monitor.abort_episode(2.0, "operator stop")
    assert described([ended]) == [("EpisodeEnded", 2.0, 0, "IDLE")]
    assert not ended.events[0].reset_requested
    start = monitor.start_episode(TASK, 10.0)
    assert monitor.state.best_progress == 0.0 and monitor.state.estimates_accepted == 0
    # Low progress after a 0.9 best is no regression, and one vote is no success: nothing
    # from the previous episode carries over.
    updates = replay(monitor, trace([10.5, 11.0], [0.2, 0.2], [0.9, 0.1]))
    assert described([start] + updates) == [("EpisodeStarted", 10.0, 0)]


def test_starting_over_a_running_episode_aborts_it_first():
    monitor = TaskMonitor(MonitorConfig())
    first = monitor.start_episode(TASK, 0.0)
    second = monitor.start_episode(TASK, 5.0)
    assert described([first, second]) == [
        ("EpisodeStarted", 0.0, 0), ("EpisodeEnded", 5.0, 0, "IDLE"), ("EpisodeStarted", 5.0, 0)]
    assert second.events[0].episode_id == first.events[0].episode_id
    assert second.events[1].episode_id != first.events[0].episode_id


def test_regression_ignores_a_single_optimistic_estimate():
    config = MonitorConfig(regression_margin=0.25, regression_hold_s=0.5)
    monitor = TaskMonitor(config)
    monitor.start_episode(TASK, 0.0)
    progress = [0.2, 0.3, 0.95, 0.35, 0.4, 0.4, 0.45, 0.5]  # 0.95 is one outlier
    updates = replay(monitor, trace([0.5 * i for i in range(1, 9)], progress, [0.1] * 8))
    assert described(updates) == []
    assert monitor.state.best_progress == pytest.approx(0.45)


def test_replace_keeps_validation():
    with pytest.raises(ValueError):
        dataclasses.replace(MonitorConfig(), success_n=1, success_k=2)


def test_gaps_between_scored_frames_are_no_outage_when_the_caller_detects_outages():
    """Check that the stall clock keeps running across gaps that are not camera outages.

    Live, a model slower than camera_stale_after_s leaves such gaps between scored frames.
    """
    import dataclasses as dc

    from robo_reward_ros.core.events import FailureDetected, FailureKind
    from robo_reward_ros.core.monitor_config import MonitorConfig
    from robo_reward_ros.core.task_monitor import TaskMonitor
    from robo_reward_ros.core.task_spec import build_task
    from monitor_traces import replay, trace

    config = MonitorConfig(stall_window_s=6.0, camera_stale_after_s=2.0,
                           low_progress_grace_s=100.0, episode_timeout_s=None)
    stamps = [3.0 * i for i in range(1, 6)]  # one estimate every 3 s, flat progress
    kinds = {}
    for gaps_are_outages in (True, False):
        monitor = TaskMonitor(dc.replace(config, gaps_are_outages=gaps_are_outages))
        monitor.start_episode(build_task(["stack the cups"]), 0.0)
        updates = replay(monitor, trace(stamps, [0.4] * len(stamps)))
        kinds[gaps_are_outages] = [e.kind for u in updates for e in u.events
                                   if isinstance(e, FailureDetected)]
    assert FailureKind.STALL not in kinds[True] and FailureKind.CAMERA_STALE in kinds[True]
    assert kinds[False] == [FailureKind.STALL]


def test_a_single_spike_is_not_the_level_a_stall_is_stuck_near():
    """Before: the stall reference jumped to a one-estimate spike ("stuck near 1.00" at 0.30)."""
    from robo_reward_ros.core.failure_detectors import StallDetector
    detector = StallDetector(min_delta=0.05, window_s=2.0, sustain=2)
    trace = [0.30, 0.30, 1.00] + [0.30] * 8  # one optimistic estimate, then the robot is stuck
    findings = [detector.update(0.5 * i, p) for i, p in enumerate(trace)]
    stalls = [f for f in findings if f is not None]
    assert len(stalls) == 1
    assert "stuck near 0.30" in stalls[0].description and stalls[0].threshold == pytest.approx(0.35)
    # A sustained gain still restarts the stall clock.
    detector = StallDetector(min_delta=0.05, window_s=2.0, sustain=2)
    rising = [0.3, 0.3, 0.5, 0.5, 0.5, 0.7, 0.7, 0.7, 0.9, 0.9]
    assert all(detector.update(0.5 * i, p) is None for i, p in enumerate(rising))
