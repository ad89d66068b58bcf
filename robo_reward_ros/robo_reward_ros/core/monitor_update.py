# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What the task monitor returns: the callers (node, pipeline, replay) import these without the monitor."""
from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

from robo_reward_ros.core.events import DecidedBy, MonitorEvent, RewardStep, TaskStatus


@dataclasses.dataclass(frozen=True)
class MonitorState:
    """A snapshot for the task-state topic and diagnostics."""

    status: TaskStatus
    episode_id: str = ""
    stage_index: int = 0
    num_stages: int = 0
    instruction: str = ""
    stage_progress: float = 0.0
    best_progress: float = 0.0
    task_progress: float = 0.0
    success_score: float = 0.0
    window_start_stamp: float = 0.0
    episode_start_stamp: float = 0.0
    stage_start_stamp: float = 0.0
    stamp: float = 0.0
    estimates_accepted: int = 0
    estimates_rejected: int = 0
    episode_return: float = 0.0
    reason: str = ""  # why the status or stage last changed, in words
    decided_by: DecidedBy = DecidedBy.NONE  # who decided the last stage or episode end
    decider: str = ""  # the operator's name, for DecidedBy.OPERATOR
    intervention_active: bool = False  # a person is in control
    pending_success: bool = False  # with status PENDING: a success waits (else a failure)
    interventions: int = 0  # takeovers so far in the episode
    intervention_s: float = 0.0  # their total length (frame-stamp seconds), a running one included


@dataclasses.dataclass(frozen=True)
class MonitorUpdate:
    """What one call produced.

    ``reward`` is None when no reward step happened (the estimates were rejected, or no episode
    runs); ``step`` is then None too, except for an abort: its terminal step earns nothing (0.0).
    ``accepted_cameras``: whose estimates the step took.
    """

    events: Tuple[MonitorEvent, ...]
    reward: Optional[float]
    state: MonitorState
    accepted: bool = False
    step: Optional[RewardStep] = None
    accepted_cameras: Tuple[str, ...] = ()
