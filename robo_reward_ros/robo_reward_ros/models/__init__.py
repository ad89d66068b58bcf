# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""ROS-free reward model backends (Robometer, RoboReward, TOPReward). Imports no rclpy.

Construct with :func:`load_reward_model` (built-in and plugin backends alike); every backend is a
:class:`RewardModel`.
Heavy modules (torch, transformers) load only when a backend is built.
"""
from robo_reward_ros.models.loading.checkpoint_layout import CheckpointError
from robo_reward_ros.models.backends.frame_selection import select_frames
from robo_reward_ros.models.loading.loader import load_reward_model
from robo_reward_ros.models.loading.choices import BACKENDS, DEVICES, PRECISIONS
from robo_reward_ros.models.reward_model import Capabilities, Frame, ModelOutput, RewardModel

__all__ = ["BACKENDS", "DEVICES", "PRECISIONS", "Capabilities", "CheckpointError", "Frame", "ModelOutput",
           "RewardModel", "load_reward_model", "select_frames"]
