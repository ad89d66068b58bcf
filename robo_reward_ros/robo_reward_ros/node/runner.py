# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Runs a node until SIGINT or SIGTERM, then tears it down in order.

rclpy's own signal handler shuts the context down underneath a running executor, which can
surface as a RuntimeError from a subscription being taken at that moment; here the signal
only sets a flag, and the loop stops between callbacks, so every stop is clean. A node may define
``request_stop()``: it is called as soon as the loop stops, before the executor is shut down, so a
transition waiting on slow work (a model load) returns at once.

Repeated signals: Ctrl-C under ``ros2 launch`` sends SIGINT twice within milliseconds (the terminal
to the process group, then launch), so a signal within ``REPEAT_GRACE_SEC`` of the first is the same
request. A later one (Ctrl-C pressed again, or launch's SIGTERM 5 s after its SIGINT) while the
teardown still waits (a model step stuck in native code) ends the process at once, with exit
code 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). Nothing recorded is lost: the
episode log is written record by record without buffering; only the episode's final record is then
missing. After the teardown, signals are ignored.
"""
from __future__ import annotations

import os
import re
import signal
import sys
import time
from typing import Callable, List, Optional

import rclpy
import rclpy.logging
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.signals import SignalHandlerOptions

from robo_reward_ros.core.log_text import escape_controls
from robo_reward_ros.node.ros_compat import settle_shut_down_executor, shut_down_keeping_signal_handlers

# How often the loop looks at the stop flag while no callback is ready.
_POLL_SEC = 0.1
REPEAT_GRACE_SEC = 1.0


def rcl_error_text(exc: Exception) -> str:
    """Return rcl's message without its C source locations (", at /project/src/parse.c:835")."""
    text = str(exc).replace("failed to initialize rcl: ", "")
    return re.sub(r",? at /[^,]*\.c:\d+", "", text).replace("\n", " ").strip()


def run_node(make_node: Callable[[], Node], args: Optional[List[str]] = None,
             threads: int = 1) -> int:
    """Spin ``make_node()`` on ``threads`` executor threads (callback groups decide what overlaps)."""
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except rclpy_implementation.RCLError as exc:  # a params file missing, or not parameters YAML
        print(f"cannot start: {rcl_error_text(exc)}", file=sys.stderr)
        return 2
    # The handler takes no lock: a signal may interrupt the handler itself (a burst of SIGINTs),
    # and threading.Event.set() re-entered that way waited forever on its own condition lock.
    # Appending to a list is atomic under the GIL; the loop polls the list.
    first_signal_at: List[float] = []
    logger = rclpy.logging.get_logger("robo_reward_ros")

    def on_signal(signum, _frame) -> None:
        now = time.monotonic()
        if first_signal_at and now - first_signal_at[0] > REPEAT_GRACE_SEC:
            logger.error(f"{signal.Signals(signum).name} again while stopping: exiting now "
                         f"(exit code {128 + signum}) without waiting for the stop to finish")
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(128 + signum)
        if not first_signal_at:
            first_signal_at.append(now)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    node = None
    executor = SingleThreadedExecutor() if threads <= 1 else MultiThreadedExecutor(threads)
    try:
        try:
            node = make_node()
        except ValueError as exc:  # bad parameters: say which, without a traceback
            logger.fatal(f"cannot start: {exc}")
            return 2
        executor.add_node(node)
        while not first_signal_at and rclpy.ok():
            try:
                executor.spin_once(timeout_sec=_POLL_SEC)
            except Exception as exc:  # one bad message or callback must not end the node
                node.get_logger().error(escape_controls(f"callback failed: {type(exc).__name__}: {exc}"),
                                        throttle_duration_sec=5.0)
    finally:
        request_stop = getattr(node, "request_stop", None)
        if request_stop is not None:
            request_stop()
        # At most 1 s for callbacks in progress: an awaiting service callback never finishes once
        # nothing spins. Then what the multi-threaded executor's pool still has queued runs, before
        # the node is destroyed (ros_compat lists the distros' differences).
        executor.shutdown(timeout_sec=1.0)
        settle_shut_down_executor(executor)
        if node is not None:
            node.destroy_node()
        shut_down_keeping_signal_handlers()
        # Nothing is left to stop. Ignored (not the default handler, which Python's finalizer
        # would also put back) so a late signal cannot kill the rest of the exit.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
    return 0
