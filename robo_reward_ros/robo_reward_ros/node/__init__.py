# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The ROS 2 shell: the lifecycle node and what only translates between ROS and the core."""
