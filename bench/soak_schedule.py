# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The soak runs' shared loop: wait until the node serves, then run timed actions until a deadline.

Each action returns how long until it runs again; one that falls behind (a busy machine) runs
again a full period later rather than in a burst. The loop ends early when the node's process
dies, which a soak reports as a crash.
"""
from __future__ import annotations

import time
from typing import Callable, List, Sequence, Tuple

import rclpy

Action = Callable[[float], float]  # now -> seconds until the next run


def wait_until_serving(ros, client, child, timeout_sec: float) -> None:
    """Spin until the node's service answers (loading takes longer on a busy machine)."""
    ready_by = time.monotonic() + timeout_sec
    while not client.service_is_ready() and child.poll() is None and time.monotonic() < ready_by:
        rclpy.spin_once(ros, timeout_sec=0.1)


def run_schedule(ros, child, start: float, minutes: float,
                 actions: Sequence[Tuple[float, Action]]) -> bool:
    """Run ``(first delay, action)`` pairs from ``start`` for ``minutes``; True when the node died."""
    deadline = start + minutes * 60.0
    due: List[float] = [start + first for first, _ in actions]
    while time.monotonic() < deadline:
        if child.poll() is not None:
            return True
        now = time.monotonic()
        for index, (_, action) in enumerate(actions):
            if now >= due[index]:
                period = action(now)
                due[index] += period
                if due[index] < now:  # fell behind: no burst
                    due[index] = now + period
        rclpy.spin_once(ros, timeout_sec=max(0.0, min(due) - time.monotonic()))
    return False
