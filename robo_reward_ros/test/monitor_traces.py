# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the task-monitor tests.

They build estimates from traces, replay them, and describe the events compactly so a test can
compare the exact sequence.
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

from robo_reward_ros.core.events import (
    EpisodeEnded,
    FailureDetected,
    MonitorEvent,
    RewardEstimate,
)
from robo_reward_ros.core.monitor_update import MonitorUpdate
from robo_reward_ros.core.task_monitor import TaskMonitor


def estimate(stamp: float, progress: float, success: Optional[float] = None,
             camera: str = "cam0", window_start: Optional[float] = None) -> RewardEstimate:
    """Build an estimate whose newest frame is at ``stamp``.

    With ``window_start`` the estimate also carries an older frame at that stamp, as a real window
    of the stage would.
    """
    stamps = [stamp] if window_start is None else [window_start, stamp]
    progresses = [progress] * len(stamps)
    successes = None if success is None else [success] * len(stamps)
    return RewardEstimate(stamp=stamp, camera=camera, progress=progresses, frame_stamps=stamps,
                          success_prob=successes, backend="synthetic")


def trace(stamps: Sequence[float], progress: Sequence[float],
          success: Optional[Sequence[float]] = None, camera: str = "cam0") -> List[RewardEstimate]:
    """One single-frame estimate per stamp."""
    if success is None:
        return [estimate(t, p, None, camera) for t, p in zip(stamps, progress)]
    return [estimate(t, p, s, camera) for t, p, s in zip(stamps, progress, success)]


def replay(monitor: TaskMonitor, estimates: Iterable[RewardEstimate]) -> List[MonitorUpdate]:
    return [monitor.update(e) for e in estimates]


def describe(event: MonitorEvent) -> Tuple:
    """(event type or failure kind name, stamp rounded to ms, extra) for exact comparisons."""
    stamp = round(event.stamp, 3)
    if isinstance(event, FailureDetected):
        return (event.kind.name, stamp, event.stage_index, event.terminal)
    if isinstance(event, EpisodeEnded):
        return ("EpisodeEnded", stamp, event.stage_index, event.status.name)
    return (type(event).__name__, stamp, event.stage_index)


def events_of(updates: Iterable[MonitorUpdate]) -> List[MonitorEvent]:
    return [e for u in updates for e in u.events]


def described(updates: Iterable[MonitorUpdate]) -> List[Tuple]:
    return [describe(e) for e in events_of(updates)]


def first_event_stamp(events: Iterable[MonitorEvent], kind: type) -> Optional[float]:
    for e in events:
        if isinstance(e, kind):
            return e.stamp
    return None
