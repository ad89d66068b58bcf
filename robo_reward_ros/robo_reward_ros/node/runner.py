"""Runs a node until SIGINT or SIGTERM, then tears it down in order.

rclpy's own signal handler shuts the context down underneath a running executor, which can
surface as a RuntimeError from a subscription being taken at that moment; here the signal
only sets a flag, and the loop stops between callbacks, so every stop is clean.
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
    previous = {sig: signal.signal(sig, lambda *_: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
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
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
