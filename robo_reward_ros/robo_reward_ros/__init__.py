# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""robo_reward_ros: a vision-language reward model on a ROS 2 robot.

``core`` and ``models`` import no rclpy, so the offline tools and the tests can use them on a
machine without ROS; the ROS shell (nodes, conversions) lives beside them.
"""

from robo_reward_ros import library_noise as _library_noise

_library_noise.quiet()  # before anything imports torch or torchao: log levels only, no import
