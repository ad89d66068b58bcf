# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Translation between robo_reward_msgs task messages and the ROS-free TaskSpec."""
from __future__ import annotations

from robo_reward_msgs.msg import StageSpec as StageSpecMsg
from robo_reward_msgs.msg import TaskSpec as TaskSpecMsg

from robo_reward_ros.core.task_spec import TaskSpec, build_task


def task_from_msg(msg: TaskSpecMsg) -> TaskSpec:
    """Raise InvalidTaskError with the reason when the message describes no runnable task."""
    return build_task(
        [stage.instruction for stage in msg.stages],
        [stage.timeout_sec for stage in msg.stages],
        [stage.success_threshold for stage in msg.stages],
        msg.episode_timeout_sec,
    )


def task_to_msg(task: TaskSpec) -> TaskSpecMsg:
    return TaskSpecMsg(
        stages=[
            StageSpecMsg(
                instruction=stage.instruction,
                timeout_sec=stage.timeout_sec or 0.0,
                success_threshold=stage.success_threshold or 0.0,
            )
            for stage in task.stages
        ],
        episode_timeout_sec=task.episode_timeout_sec or 0.0,
    )
