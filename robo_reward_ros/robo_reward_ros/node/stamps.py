# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Seconds as a ROS ``builtin_interfaces/Time``, for the node and for clients alike.

Kept apart from messages.py, which converts the core's results and so imports the pipeline and the
monitor: a client (rclpy only) needs the stamps and nothing else of the core. The other direction,
and the rounding rule, are core/stamps.py's (duck-typed, no ROS import).
"""
from builtin_interfaces.msg import Time

from robo_reward_ros.core.stamps import split_seconds


def to_time(seconds: float) -> Time:
    """Return ``seconds`` as a Time message, rounded to the nearest nanosecond."""
    sec, nanosec = split_seconds(seconds)
    return Time(sec=sec, nanosec=nanosec)
