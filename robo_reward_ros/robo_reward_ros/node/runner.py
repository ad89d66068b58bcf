"""Runs a node until SIGINT or SIGTERM, then tears it down in order.

rclpy's own signal handler shuts the context down underneath a running executor, which can
surface as a RuntimeError from a subscription being taken at that moment; here the signal
only sets a flag, and the loop stops between callbacks, so every stop is clean. Ctrl-C under
``ros2 launch`` sends SIGINT twice (the terminal to the process group, then launch): a second
one during the teardown only sets the flag again, and after it the signals are ignored.
"""
from __future__ import annotations

import signal
import threading
from typing import Callable, List, Optional

import rclpy
import rclpy.logging
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

# How often the loop looks at the stop flag while no callback is ready.
_POLL_SEC = 0.1


def run_node(make_node: Callable[[], Node], args: Optional[List[str]] = None) -> int:
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    node = None
    executor = SingleThreadedExecutor()
    try:
        try:
            node = make_node()
        except ValueError as exc:  # bad parameters: say which, without a traceback
            rclpy.logging.get_logger("robo_reward_ros").fatal(f"cannot start: {exc}")
            return 2
        executor.add_node(node)
        while not stop.is_set() and rclpy.ok():
            try:
                executor.spin_once(timeout_sec=_POLL_SEC)
            except Exception as exc:  # one bad message or callback must not end the node
                node.get_logger().error(f"callback failed: {type(exc).__name__}: {exc}",
                                        throttle_duration_sec=5.0)
    finally:
        # A timeout: Humble's shutdown otherwise waits for every callback in progress, and an
        # awaiting service callback never finishes once nothing spins.
        executor.shutdown(timeout_sec=1.0)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        # Nothing is left to stop. Ignored (not the default handler, which Python's finalizer
        # would also put back) so a late signal cannot kill the rest of the exit.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
    return 0
