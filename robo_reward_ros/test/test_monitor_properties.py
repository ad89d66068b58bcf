# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Invariants of the monitor over random call sequences (hypothesis)."""
import math

import pytest

from robo_reward_ros.core.events import (
    EpisodeEnded,
    EpisodeStarted,
    FailureDetected,
    FailureKind,
    RewardEstimate,
)
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
from hypothesis import given, settings, strategies as st  # noqa: E402

TASK_FAILURES = [FailureKind.REGRESSION, FailureKind.STALL, FailureKind.LOW_PROGRESS]
unit = st.floats(0.0, 1.0, allow_nan=False)
gap = st.floats(0.0, 3.0, allow_nan=False)

operations = st.lists(
    st.one_of(
        st.tuples(st.just("estimate"), gap, unit, st.one_of(st.none(), unit),
                  st.sampled_from(["front", "wrist"]), st.floats(0.0, 2.0)),
        st.tuples(st.just("tick"), gap),
        st.tuples(st.just("stale"), st.sampled_from(["front", "wrist"])),
        st.tuples(st.just("error")),
        st.tuples(st.just("start"), st.integers(1, 3), gap),
        st.tuples(st.just("abort")),
    ),
    max_size=80,
)
configs = st.builds(
    lambda k, extra, terminal, rule, timeout, stage_timeout, mode: MonitorConfig(
        success_k=k, success_n=k + extra, terminal_failures=terminal, camera_rule=rule,
        episode_timeout_s=timeout, stage_timeout_s=stage_timeout, reward_mode=mode,
        regression_hold_s=0.5, stall_window_s=3.0, low_progress_grace_s=2.0),
    st.integers(1, 3), st.integers(0, 2), st.frozensets(st.sampled_from(TASK_FAILURES)),
    st.sampled_from(["any", "majority", "all"]), st.one_of(st.none(), st.floats(1.0, 30.0)),
    st.one_of(st.none(), st.floats(1.0, 10.0)), st.sampled_from(["progress", "delta",
                                                                 "potential"]),
)


def run(config, ops):
    """Apply the operations; return (events of each call, whether an episode was started before that call, rewards)."""
    monitor = TaskMonitor(config)
    clock = 0.0
    ever_started = False
    calls = []
    rewards = []
    for op in ops:
        name = op[0]
        if name == "estimate":
            _, dt, progress, success, camera, back = op
            clock += dt
            update = monitor.update(RewardEstimate(
                clock, camera, [progress, progress], [clock - back, clock],
                None if success is None else [success, success]))
        elif name == "tick":
            clock += op[1]
            update = monitor.tick(clock)
        elif name == "stale":
            update = monitor.report_camera_stale(op[1], clock, 2.5)
        elif name == "error":
            update = monitor.report_model_error(clock, "boom")
        elif name == "start":
            clock += op[2]
            stages = [f"stage {i}" for i in range(op[1])]
            update = monitor.start_episode(build_task(stages), clock)
        else:
            update = monitor.abort_episode(clock, "stop")
        calls.append((update.events, ever_started))
        if update.reward is not None:
            rewards.append(update.reward)
        ever_started = ever_started or name == "start"
    return calls, rewards


@settings(max_examples=150, deadline=None, database=None)
@given(configs, operations)
def test_episode_invariants(config, ops):
    calls, rewards = run(config, ops)
    episodes = {}
    for events, ever_started in calls:
        if not ever_started:
            # No event before the first episode starts, except that episode's own start.
            assert all(isinstance(e, EpisodeStarted) for e in events)
        for event in events:
            episodes.setdefault(event.episode_id, []).append(event)
    for episode_id, events in episodes.items():
        assert isinstance(events[0], EpisodeStarted), "an episode opens with its start event"
        start = events[0]
        assert all(e.stamp >= start.stamp for e in events), "no event before the episode start"
        ends = [i for i, e in enumerate(events) if isinstance(e, EpisodeEnded)]
        assert len(ends) <= 1, "at most one terminal event per episode"
        if ends:
            assert ends[0] == len(events) - 1, "nothing after the episode ended"
            assert events[-1].failure_kind not in (FailureKind.CAMERA_STALE,
                                                   FailureKind.MODEL_ERROR)
        terminal = [e for e in events if isinstance(e, FailureDetected) and e.terminal]
        assert len(terminal) <= 1
        if terminal:
            assert events[-2] is terminal[0] and ends
        for e in events:
            if isinstance(e, FailureDetected) and not e.kind.is_task_failure:
                assert not e.terminal
        stages = [e.stage_index for e in events]
        assert stages == sorted(stages), "stage index never decreases within an episode"
        assert max(stages) < start.num_stages
    assert all(math.isfinite(r) for r in rewards)
