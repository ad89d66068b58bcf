# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The node's messages about an episode become the same trace whoever decided its stages.

With operator.confirm_decisions the model's estimate of a success says "pending" and the success
itself is in the task state (the operator's confirmation): the trace, and so the demo's summary and
``robo-reward eval``, must still see when each stage and the episode succeeded.
"""
import numpy as np

from robo_reward_msgs.msg import RewardEstimate, TaskState

from robo_reward_ros.core.events import TaskStatus
from robo_reward_ros.core.frame import Frame
from robo_reward_ros.node.live_replay import trace_from_messages
from robo_reward_ros.node.stamps import to_time
from robo_reward_ros.recordings.episode import Episode

OFFSET = 100.0


def _episode() -> Episode:
    frames = [Frame(0.5 * i, np.zeros((4, 4, 3), np.uint8)) for i in range(40)]
    return Episode("drawer", ("open the drawer", "close the drawer"), frames)


def _estimate(stamp: float, stage: int, success: bool = False) -> RewardEstimate:
    msg = RewardEstimate()
    msg.header.stamp = to_time(OFFSET + stamp)
    msg.episode_id, msg.stage_index, msg.success, msg.progress = "drawer", stage, success, 0.5
    return msg


def _state(stamp: float, stage: int, status: TaskStatus, episode: str = "drawer") -> TaskState:
    msg = TaskState()
    msg.header.stamp = to_time(OFFSET + stamp)
    msg.episode_id, msg.stage_index, msg.stage_count, msg.status = episode, stage, 2, int(status)
    return msg


def test_successes_the_operator_confirmed_come_from_the_task_state_once_each():
    estimates = [_estimate(1.0, 0), _estimate(8.5, 0), _estimate(9.0, 1), _estimate(20.5, 1)]
    states = [_state(1.0, 0, TaskStatus.RUNNING), _state(8.5, 0, TaskStatus.PENDING),
              _state(8.8, 1, TaskStatus.STAGE_SUCCEEDED), _state(8.8, 1, TaskStatus.STAGE_SUCCEEDED),
              _state(20.5, 1, TaskStatus.PENDING), _state(20.8, 1, TaskStatus.SUCCEEDED),
              _state(20.8, 1, TaskStatus.SUCCEEDED),  # published again: one end
              _state(3.0, 0, TaskStatus.FAILED, episode="another")]
    trace = trace_from_messages(_episode(), estimates, [], states, OFFSET)
    events = [(e.type, e.stage, round(e.stamp, 3), e.status) for e in trace.events]
    assert events == [("stage_succeeded", 0, 8.8, ""), ("stage_succeeded", 1, 20.8, ""),
                      ("episode_ended", 1, 20.8, "succeeded")]
    assert abs(trace.succeeded_stamp - 20.8) < 1e-6
    assert trace.summary()["detected_success_stamp"] is not None


def test_a_model_decided_success_keeps_the_estimate_stamp():
    estimates = [_estimate(8.5, 0, success=True), _estimate(20.5, 1, success=True)]
    states = [_state(8.5, 1, TaskStatus.STAGE_SUCCEEDED), _state(20.5, 1, TaskStatus.SUCCEEDED)]
    trace = trace_from_messages(_episode(), estimates, [], states, OFFSET)
    assert [(e.type, e.stage) for e in trace.events] == [
        ("stage_succeeded", 0), ("stage_succeeded", 1), ("episode_ended", 1)]
    assert abs(trace.succeeded_stamp - 20.5) < 1e-6
