# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Synthetic progress traces, one per case of the issue.

Each asserts the exact event sequence (type, stamp, stage, terminal/status). Estimates come every
0.5 s of frame-stamp time.
"""
import dataclasses

import pytest

from monitor_traces import described, estimate, events_of, replay, trace
from robo_reward_ros.core.events import (
    FailureDetected,
    FailureKind,
    Severity,
    StageAdvanced,
    TaskStatus,
)
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task

CONFIG = MonitorConfig(
    success_threshold=0.65,
    progress_success_threshold=0.9,
    success_k=2,
    success_n=3,
    regression_margin=0.25,
    regression_hold_s=1.0,
    stall_min_delta=0.05,
    stall_window_s=5.0,
    low_progress_floor=0.15,
    low_progress_grace_s=4.0,
    sustain_estimates=2,
    episode_timeout_s=20.0,
    camera_stale_after_s=2.0,
)
STARTED = ("EpisodeStarted", 0.0, 0)
ONE_STAGE = build_task(["pick up the cup"])
TWO_STAGES = build_task(["pick up the cup", "put the cup on the plate"])


def stamps(first, last, step=0.5):
    count = int(round((last - first) / step)) + 1
    return [round(first + i * step, 6) for i in range(count)]


def started(config=CONFIG, task=ONE_STAGE):
    monitor = TaskMonitor(config)
    start = monitor.start_episode(task, 0.0)
    return monitor, start


def test_clean_success():
    monitor, start = started()
    ts = stamps(0.5, 6.0)
    updates = replay(monitor, trace(ts, [min(1.0, t / 5) for t in ts],
                                    [0.9 if t >= 4.0 else 0.02 for t in ts]))
    assert described([start] + updates) == [
        STARTED,
        ("StageSucceeded", 4.5, 0),
        ("EpisodeEnded", 4.5, 0, "SUCCEEDED"),
    ]
    end = updates[ts.index(4.5)].events[-1]
    assert end.reset_requested and end.stages_completed == 1
    # After the end, estimates change nothing until a new episode starts.
    assert all(not u.events and u.reward is None for u in updates[ts.index(4.5) + 1:])
    assert monitor.state.status is TaskStatus.SUCCEEDED


def test_noisy_success_near_threshold_needs_two_of_three():
    # Single votes (>= 0.65) are always two estimates apart until the last three estimates;
    # 0.65 itself is a vote.
    success = [0.60, 0.70, 0.60, 0.62, 0.66, 0.64, 0.63, 0.65, 0.50, 0.64, 0.70, 0.60, 0.66]
    ts = stamps(0.5, 0.5 * len(success))
    progress = [0.5 + 0.04 * i for i in range(len(success))]
    monitor, start = started()
    updates = replay(monitor, trace(ts, progress, success))
    assert described([start] + updates) == [
        STARTED,
        ("StageSucceeded", 6.5, 0),
        ("EpisodeEnded", 6.5, 0, "SUCCEEDED"),
    ]


def test_progress_decides_success_without_a_success_head():
    ts = stamps(0.5, 4.0)
    progress = [0.3, 0.5, 0.7, 0.95, 0.8, 0.92, 0.93, 0.95]  # one early 0.95 is not enough
    monitor, start = started()
    updates = replay(monitor, trace(ts, progress))
    assert described([start] + updates) == [
        STARTED,
        ("StageSucceeded", 3.0, 0),
        ("EpisodeEnded", 3.0, 0, "SUCCEEDED"),
    ]


def test_sharp_drop_is_a_terminal_regression_after_the_hold_time():
    config = dataclasses.replace(CONFIG, terminal_failures=frozenset({FailureKind.REGRESSION}))
    ts = stamps(0.5, 6.0)
    progress = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.6, 0.2, 0.2, 0.2, 0.2, 0.2]
    monitor, start = started(config)
    updates = replay(monitor, trace(ts, progress, [0.02] * len(ts)))
    # Below best 0.6 - 0.25 from t=4.0; held 1.0 s at t=5.0.
    assert described([start] + updates) == [
        STARTED,
        ("REGRESSION", 5.0, 0, True),
        ("EpisodeEnded", 5.0, 0, "FAILED"),
    ]
    failure = updates[ts.index(5.0)].events[0]
    assert failure.severity is Severity.ERROR
    assert failure.value == pytest.approx(0.2) and failure.threshold == pytest.approx(0.35)
    assert "0.60" in failure.description and "dropped" in failure.description
    assert updates[ts.index(5.0)].events[1].failure_kind == FailureKind.REGRESSION


def test_dip_shorter_than_the_hold_time_is_not_a_regression():
    ts = stamps(0.5, 6.0)
    progress = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.6, 0.2, 0.2, 0.6, 0.62, 0.66]
    monitor, start = started()
    updates = replay(monitor, trace(ts, progress, [0.02] * len(ts)))
    assert described([start] + updates) == [STARTED]


def test_plateau_is_a_stall_once_and_rearms_on_improvement():
    ts = stamps(0.5, 12.0)
    plateau = [0.42 if i % 2 else 0.38 for i in range(len(stamps(2.5, 9.0)))]
    progress = [0.1, 0.2, 0.3, 0.4] + plateau + [0.6] * len(stamps(9.5, 12.0))
    monitor, start = started()
    updates = replay(monitor, trace(ts, progress, [0.02] * len(ts)))
    # Levels sustained over 2 estimates: the last gain above 0.05 is at t=2.5 (0.30 -> 0.38, the
    # plateau's floor); 5 s window -> t=7.5. The jump to 0.6 at 9.5 re-arms the detector, whose
    # next window would end after the trace.
    assert described([start] + updates) == [STARTED, ("STALL", 7.5, 0, False)]
    stall = updates[ts.index(7.5)].events[0]
    assert stall.severity is Severity.WARNING and not stall.terminal
    assert monitor.state.status is TaskStatus.RUNNING


def test_flat_low_trace_reports_low_progress_then_stall():
    ts = stamps(0.5, 6.0)
    progress = [0.05, 0.07, 0.04, 0.06] * 3
    monitor, start = started()
    updates = replay(monitor, trace(ts, progress, [0.01] * len(ts)))
    assert described([start] + updates) == [
        STARTED,
        ("LOW_PROGRESS", 4.0, 0, False),
        ("STALL", 5.5, 0, False),
    ]


def test_flat_low_trace_ends_the_episode_when_low_progress_is_terminal():
    config = dataclasses.replace(CONFIG, terminal_failures={"low_progress"})
    ts = stamps(0.5, 6.0)
    monitor, start = started(config)
    updates = replay(monitor, trace(ts, [0.05, 0.07, 0.04, 0.06] * 3, [0.01] * len(ts)))
    assert described([start] + updates) == [
        STARTED,
        ("LOW_PROGRESS", 4.0, 0, True),
        ("EpisodeEnded", 4.0, 0, "FAILED"),
    ]


def test_episode_timeout_on_estimates():
    task = build_task(["pick up the cup"], episode_timeout_sec=6.0)
    ts = stamps(0.5, 8.0)
    monitor, start = started(task=task)
    updates = replay(monitor, trace(ts, [0.2 + 0.06 * t for t in ts], [0.1] * len(ts)))
    assert described([start] + updates) == [
        STARTED,
        ("TIMEOUT", 6.0, 0, True),
        ("EpisodeEnded", 6.0, 0, "TIMED_OUT"),
    ]
    end = updates[ts.index(6.0)].events[1]
    assert end.failure_kind == FailureKind.TIMEOUT and end.reset_requested
    assert monitor.state.status is TaskStatus.TIMED_OUT


def test_episode_timeout_fires_on_tick_while_the_model_is_silent():
    task = build_task(["pick up the cup"], episode_timeout_sec=6.0)
    monitor, start = started(task=task)
    ts = stamps(0.5, 2.0)
    updates = replay(monitor, trace(ts, [0.2, 0.3, 0.4, 0.5], [0.1] * 4))
    updates.append(monitor.tick(5.99))
    updates.append(monitor.tick(6.25))
    assert described([start] + updates) == [
        STARTED,
        ("TIMEOUT", 6.25, 0, True),
        ("EpisodeEnded", 6.25, 0, "TIMED_OUT"),
    ]


def test_stage_timeout_ends_the_episode_in_stage_two():
    task = build_task(["pick up the cup", "put it on the plate"], [0.0, 2.0])
    monitor, start = started(task=task)
    ts = stamps(0.5, 6.0)
    success = [0.9 if 2.5 <= t <= 3.0 else 0.1 for t in ts]
    progress = [min(1.0, t / 3) if t <= 3.0 else 0.1 * (t - 3.0) + 0.2 for t in ts]
    updates = replay(monitor, trace(ts, progress, success))
    assert described([start] + updates) == [
        STARTED,
        ("StageSucceeded", 3.0, 0),
        ("StageAdvanced", 3.0, 1),
        ("TIMEOUT", 5.0, 1, True),
        ("EpisodeEnded", 5.0, 1, "TIMED_OUT"),
    ]


def two_stage_first_half(monitor):
    """Stage 1 succeeds at t=3.0 (votes at 2.5 and 3.0)."""
    ts = stamps(0.5, 3.0)
    return replay(monitor, trace(ts, [t / 3 for t in ts], [0.9 if t >= 2.5 else 0.05 for t in ts]))


def test_two_stage_success_and_no_leak_of_stage_one_frames():
    monitor, start = started(task=TWO_STAGES)
    updates = two_stage_first_half(monitor)
    advanced = updates[-1].events[-1]
    assert isinstance(advanced, StageAdvanced)
    assert advanced.window_start_stamp == 3.0
    assert advanced.instruction == "put the cup on the plate"
    assert monitor.state.status is TaskStatus.STAGE_SUCCEEDED
    # The reason a person reads numbers stages from 1, as every console line does (stage_index stays 0-based).
    assert monitor.state.reason.startswith("stage 1 succeeded: success probability >= 0.65")
    assert monitor.state.stage_index == 1
    # Estimates scored in flight on stage-1 frames are rejected.
    stale = [estimate(3.0, 0.95, 0.95), estimate(3.5, 0.95, 0.95, window_start=2.0)]
    rejected = replay(monitor, stale)
    assert all(not u.accepted and not u.events and u.reward is None for u in rejected)
    # Stage 2 starts from nothing: its first high vote at 3.5 must not join stage-1 votes.
    ts = stamps(3.5, 7.0)
    success = [0.9 if t == 3.5 or t >= 5.5 else 0.05 for t in ts]
    progress = [0.2 + 0.2 * (t - 3.5) for t in ts]
    second = replay(monitor, [estimate(t, p, s, window_start=3.5)
                              for t, p, s in zip(ts, progress, success)])
    assert described([start] + updates + rejected + second) == [
        STARTED,
        ("StageSucceeded", 3.0, 0),
        ("StageAdvanced", 3.0, 1),
        ("StageSucceeded", 6.0, 1),
        ("EpisodeEnded", 6.0, 1, "SUCCEEDED"),
    ]
    assert monitor.state.estimates_rejected == 2
    assert events_of(second)[-1].stages_completed == 2


def test_failure_in_stage_two():
    config = dataclasses.replace(CONFIG, terminal_failures=frozenset({FailureKind.REGRESSION}))
    monitor, start = started(config, TWO_STAGES)
    updates = two_stage_first_half(monitor)
    ts = stamps(3.5, 8.0)
    progress = [0.1, 0.3, 0.5, 0.5] + [0.1] * (len(ts) - 4)
    updates += replay(monitor, trace(ts, progress, [0.05] * len(ts)))
    assert described([start] + updates) == [
        STARTED,
        ("StageSucceeded", 3.0, 0),
        ("StageAdvanced", 3.0, 1),
        ("REGRESSION", 6.5, 1, True),
        ("EpisodeEnded", 6.5, 1, "FAILED"),
    ]
    assert events_of(updates)[-1].stages_completed == 1


def test_camera_gap_is_reported_and_not_counted_as_stall_time():
    ts = stamps(0.5, 3.0) + stamps(7.0, 13.0)
    progress = [min(0.4, 0.1 * i) for i in range(1, len(ts) + 1)]
    monitor, start = started()
    updates = replay(monitor, trace(ts, progress, [0.02] * len(ts)))
    # Last gain at t=2.0; without the gap rule the stall would fire at 7.0. The gap (3.0 -> 7.0)
    # restarts the stall window at 7.0, so it fires at 12.0.
    assert described([start] + updates) == [
        STARTED,
        ("CAMERA_STALE", 7.0, 0, False),
        ("STALL", 12.0, 0, False),
    ]
    stale = updates[ts.index(7.0)].events[0]
    assert stale.camera == "cam0" and stale.severity is Severity.WARNING
    assert not stale.kind.is_task_failure
    assert monitor.state.status is TaskStatus.RUNNING


def test_reported_stale_camera_and_model_error_never_fail_the_task():
    config = dataclasses.replace(
        CONFIG, terminal_failures=frozenset({FailureKind.REGRESSION, FailureKind.STALL,
                                             FailureKind.LOW_PROGRESS}))
    monitor, start = started(config)
    first = replay(monitor, trace(stamps(0.5, 2.0), [0.1, 0.2, 0.3, 0.4], [0.02] * 4))
    health = [
        monitor.report_camera_stale("cam0", 3.0, age_s=1.0),
        monitor.report_camera_stale("cam0", 3.5, age_s=1.5),  # same stale period: no event
        monitor.report_model_error(4.0, "CUDA out of memory"),
        monitor.report_model_error(4.5, "CUDA out of memory"),  # same error period
    ]
    # The camera comes back at 6.5: already reported, so no second stale event; the stall window
    # does not run from before the gap: 0.4 (seen once at t=2.0) is sustained at 7.0, a gain
    # over the sustained 0.3, so the window runs from 7.0.
    ts = stamps(6.5, 12.0)
    second = replay(monitor, trace(ts, [0.4] * len(ts), [0.02] * len(ts)))
    assert described([start] + first + health + second) == [
        STARTED,
        ("CAMERA_STALE", 3.0, 0, False),
        ("MODEL_ERROR", 4.0, 0, False),
        ("STALL", 12.0, 0, True),
        ("EpisodeEnded", 12.0, 0, "FAILED"),
    ]
    model_error = health[2].events[0]
    assert model_error.severity is Severity.ERROR and "CUDA" in model_error.description
    failure_kinds = [e.failure_kind for e in events_of(second) if hasattr(e, "failure_kind")]
    assert failure_kinds == [FailureKind.STALL]


def test_no_events_outside_an_episode():
    monitor = TaskMonitor(CONFIG)
    before = [monitor.update(estimate(1.0, 0.9, 0.9)), monitor.tick(100.0),
              monitor.report_camera_stale("cam0", 1.0, 5.0),
              monitor.report_model_error(1.0, "boom"), monitor.abort_episode(1.0, "stop")]
    assert all(not u.events and u.reward is None for u in before)
    assert monitor.state.status is TaskStatus.IDLE
    # Frames stamped before the episode start are rejected as well.
    monitor.start_episode(ONE_STAGE, 10.0)
    assert not monitor.update(estimate(9.5, 0.9, 0.9)).accepted
    assert monitor.update(estimate(10.0, 0.9, 0.9)).accepted


def test_failures_carry_no_success_and_terminal_failures_are_errors():
    config = dataclasses.replace(CONFIG, terminal_failures=frozenset({FailureKind.STALL}))
    monitor, start = started(config)
    ts = stamps(0.5, 8.0)
    updates = replay(monitor, trace(ts, [0.5] * len(ts), [0.6] * len(ts)))
    failures = [e for e in events_of(updates) if isinstance(e, FailureDetected)]
    assert [(f.kind, f.severity, f.terminal, f.stamp) for f in failures] == [
        (FailureKind.STALL, Severity.ERROR, True, 5.5)
    ]
