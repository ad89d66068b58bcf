# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward node's parameters and their validation: ROS-free, read by the node and the offline tools alike."""
