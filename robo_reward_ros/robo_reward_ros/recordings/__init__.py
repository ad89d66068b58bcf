# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Recordings and their formats (episodes, rosbag2, MCAP, LeRobot, labels, videos, replay traces).

Read and written without ROS; shared by replay, evaluation and training.
"""
