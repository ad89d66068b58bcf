# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""For RL controllers: a reward node's steps, state and services from Python (rclpy only, no torch).

``RewardClient`` runs its own rclpy node on a thread of its own, so a controller's loop can block
on "the step covering my frame" without spinning anything itself. ``RewardNodeEnv`` (in
``gym_env``, needs gymnasium) wraps any environment that renders camera frames.
"""
from robo_reward_ros.client.reward_client import (EpisodeGone, RewardClient, RewardNodeError,
                                                  StepTimeout, StepUnavailable)

__all__ = ["EpisodeGone", "RewardClient", "RewardNodeError", "StepTimeout", "StepUnavailable"]
