# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Core results to robo_reward_msgs messages; no decisions here."""
from __future__ import annotations

import math
from typing import Optional

from robo_reward_msgs.msg import (DecidedBy, FailureEvent, OperatorLabel, ResetRequest, RewardEstimate,
                                  RewardStep, TaskState)

from robo_reward_ros.core.events import DecidedBy as Decider
from robo_reward_ros.core.events import EpisodeEnded, FailureDetected
from robo_reward_ros.core.operator_labels import OperatorLabel as Label
from robo_reward_ros.core.events import RewardStep as Step
from robo_reward_ros.core.monitor_update import MonitorState
from robo_reward_ros.core.reward_pipeline import CameraResult, finite_or_nan
from robo_reward_ros.node.stamps import to_time


def estimate_msg(result: CameraResult, model_id: str, precision: str,
                 frame_id: str = "") -> RewardEstimate:
    """One camera's view of a step (``result.step``: only estimates the step took are published)."""
    estimate, step = result.estimate, result.step
    msg = RewardEstimate()
    msg.header.stamp = to_time(estimate.stamp)
    msg.header.frame_id = frame_id
    msg.episode_id = step.episode_id
    msg.stage_index = step.stage_index  # the stage scored, even when this step finished it
    msg.instruction = step.instruction
    msg.camera = result.camera
    msg.progress = estimate.last_progress
    msg.reward = step.reward
    success = estimate.last_success_prob
    msg.has_success_probability = success is not None
    msg.success_probability = finite_or_nan(success)
    msg.success = step.stage_succeeded
    msg.frame_progress = [float(v) for v in estimate.progress]
    msg.frame_success_probability = [float(v) for v in estimate.success_prob or ()]
    msg.frame_stamps = [to_time(s) for s in estimate.frame_stamps]
    msg.backend = estimate.backend
    msg.model_id = model_id
    msg.precision = precision
    msg.inference_latency_sec = float(estimate.latency_s)
    return msg


def failure_msg(event: FailureDetected) -> FailureEvent:
    msg = FailureEvent()
    msg.header.stamp = to_time(event.stamp)
    msg.episode_id = event.episode_id
    msg.stage_index = event.stage_index
    msg.kind = int(event.kind)
    msg.severity = int(event.severity)
    msg.terminal = event.terminal
    msg.task_failure = event.task_failure
    msg.progress = finite_or_nan(event.progress)
    msg.description = event.description
    msg.decided_by = decided_by_msg(event.decided_by, event.decider)
    return msg


def decided_by_msg(decided_by: Decider, name: str) -> DecidedBy:
    return DecidedBy(source=int(decided_by), name=name)


def label_msg(label: Label) -> OperatorLabel:
    msg = OperatorLabel()
    msg.header.stamp = to_time(label.stamp)
    msg.episode_id = label.episode_id
    msg.stage_index = label.stage_index
    msg.kind = int(label.kind)
    msg.verdict = int(label.verdict)
    msg.source = label.source
    msg.reason = label.reason
    msg.applied = label.applied
    msg.late = label.late
    msg.outcome = label.outcome
    msg.model_progress = finite_or_nan(label.model_progress)
    msg.model_success_probability = finite_or_nan(label.model_success_prob)
    msg.model_decision = label.model_decision
    return msg


def state_msg(state: MonitorState, stamp: Optional[float] = None) -> TaskState:
    msg = TaskState()
    when = state.stamp if stamp is None else stamp
    msg.header.stamp = to_time(when if math.isfinite(when) else 0.0)
    msg.episode_id = state.episode_id
    msg.stage_index = min(state.stage_index, max(state.num_stages - 1, 0))
    msg.stage_count = state.num_stages
    msg.instruction = state.instruction
    msg.status = int(state.status)
    msg.reason = state.reason
    msg.decided_by = decided_by_msg(state.decided_by, state.decider)
    msg.intervention_active = state.intervention_active
    msg.pending_success = state.pending_success
    return msg


def reset_msg(event: EpisodeEnded) -> ResetRequest:
    msg = ResetRequest()
    msg.header.stamp = to_time(event.stamp)
    msg.episode_id = event.episode_id
    msg.status = int(event.status)
    msg.reason = event.reason
    msg.decided_by = decided_by_msg(event.decided_by, event.decider)
    return msg


def step_msg(step: Step) -> RewardStep:
    msg = RewardStep()
    msg.header.stamp = to_time(step.stamp)
    msg.episode_id = step.episode_id
    msg.step_index = step.step_index
    msg.stage_index = step.stage_index
    msg.stage_count = step.num_stages
    msg.instruction = step.instruction
    msg.progress = float(step.progress)
    msg.task_progress = float(step.task_progress)
    msg.reward = float(step.reward)
    msg.episode_return = float(step.episode_return)
    msg.has_success_probability = step.success_prob is not None
    msg.success_probability = finite_or_nan(step.success_prob)
    msg.stage_succeeded = step.stage_succeeded
    msg.terminated = step.terminated
    msg.truncated = step.truncated
    msg.status = int(step.status)
    msg.end_reason = step.reason
    msg.cameras = list(step.cameras)
    msg.intervened = step.intervened
    msg.decided_by = decided_by_msg(step.decided_by, step.decider)
    checked = step.verifier
    msg.verifier_checked = checked is not None
    msg.verifier_confirmed = checked is not None and checked.confirmed
    msg.verifier_value = finite_or_nan(checked.value if checked is not None else None)
    msg.verifier_latency_sec = float(checked.latency_s) if checked is not None else 0.0
    msg.verifier_backend = checked.backend if checked is not None else ""
    return msg
