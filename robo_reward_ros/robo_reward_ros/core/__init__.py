# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""ROS-free core: frame window, sampling, task monitor, metrics. Imports no rclpy."""
