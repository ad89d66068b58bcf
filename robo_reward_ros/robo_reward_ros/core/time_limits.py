# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episode and stage time limits, kept apart from the monitor's decisions on estimates.

A limit fires on frame-stamp time alone, so the monitor checks it on every estimate and on its
timer. The task's own limit wins; where the task sets none, the configured default applies.
"""
from __future__ import annotations

from typing import Optional

from robo_reward_ros.core.events import FailureKind
from robo_reward_ros.core.failure_detectors import Finding
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_spec import TaskSpec


def time_limit_exceeded(task: TaskSpec, stage_index: int, episode_start: float, stage_start: float,
                        now: float, config: MonitorConfig) -> Optional[Finding]:
    """Return the finding of the limit that ``now`` reached, the episode's before the stage's; None if none."""
    stage = task.stages[stage_index]
    limits = (
        ("episode", episode_start, task.episode_timeout_sec or config.episode_timeout_s),
        (f"stage {stage_index + 1} ('{stage.instruction}')", stage_start,
         stage.timeout_sec or config.stage_timeout_s),
    )
    for what, start, limit in limits:
        if limit is None or now - start < limit:
            continue
        return Finding(
            kind=FailureKind.TIMEOUT,
            value=now - start,
            threshold=limit,
            description=(f"{what} ran {now - start:.1f} s, over its {limit:.1f} s limit; the "
                         f"episode ends and a reset is requested"),
        )
    return None
