# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward backends (Robometer, RoboReward, TOPReward) behind the RewardModel interface."""
