# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Stamps in seconds and back: ROS's (sec, nanosec) pairs and rosbag nanoseconds, with one rounding rule.

Duck-typed on ``.sec`` and ``.nanosec``, so rclpy's messages and rosbags' alike go through it
without this module importing either.
"""
from typing import Any, Tuple

NANOSECONDS_PER_SECOND = 10**9


def to_seconds(stamp: Any) -> float:
    """Return a ``builtin_interfaces/Time``-like stamp in seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def to_nanoseconds(stamp: Any) -> int:
    """Return a ``builtin_interfaces/Time``-like stamp in whole nanoseconds (exact)."""
    return stamp.sec * NANOSECONDS_PER_SECOND + stamp.nanosec


def split_seconds(seconds: float) -> Tuple[int, int]:
    """Return (sec, nanosec) of a time in seconds, rounded to the nearest nanosecond."""
    return split_nanoseconds(int(round(seconds * 1e9)))


def split_nanoseconds(nanoseconds: int) -> Tuple[int, int]:
    """Return (sec, nanosec) of a time in nanoseconds."""
    return divmod(int(nanoseconds), NANOSECONDS_PER_SECOND)
