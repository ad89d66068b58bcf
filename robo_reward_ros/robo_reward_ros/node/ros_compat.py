# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The rclpy API differences between the distros the node runs on (Humble, Jazzy, Kilted).

Kept in one place so the rest of the node is written against one API. Read against the humble
(3.3) and jazzy (7.1) branches of ros2/rclpy and the Kilted 9.1 wheel; everything else the node
uses is the same on all three:
- ``rclpy.event_handler`` (Iron on) is ``rclpy.qos_event`` on Humble (Jazzy and Kilted keep a
  deprecated ``qos_event`` shim that warns on import, so the new name is tried first);
- ``Node.add_post_set_parameters_callback`` (Iron on) does not exist on Humble;
- ``Executor.shutdown()`` waits for callbacks in progress on Humble: the runner passes a timeout;
  Kilted's ``MultiThreadedExecutor.shutdown()`` also joins its pool's threads (Humble's and
  Jazzy's do not: ``settle_shut_down_executor`` does).
- ``LifecycleNode(callback_group=...)`` is the same on all three: the reward node puts its
  lifecycle services in their own group with it, so ``get_state`` answers during a transition.
- Kilted's ``rclpy.try_shutdown()`` uninstalls rclpy's signal handlers (Humble's and Jazzy's do
  not, and take no ``uninstall_handlers``): ``shut_down_keeping_signal_handlers``.
"""
from __future__ import annotations

import inspect
from typing import Callable

import rclpy

try:  # Iron and later
    from rclpy.event_handler import SubscriptionEventCallbacks
except ImportError:  # Humble: the same class, in its old module
    from rclpy.qos_event import SubscriptionEventCallbacks

__all__ = ["SubscriptionEventCallbacks", "on_parameters_set", "settle_shut_down_executor",
           "shut_down_keeping_signal_handlers"]


def on_parameters_set(node, validate: Callable, apply: Callable[[list], None]) -> None:
    """Validate a change before it is set and apply it after.

    rclpy has a post-set callback from Iron on; on Humble the accepted change is applied at the
    end of the set callback instead (the values are not yet readable from the node there, which
    ``apply`` does not need: it gets the changed parameters).
    """
    if hasattr(node, "add_post_set_parameters_callback"):
        node.add_on_set_parameters_callback(validate)
        node.add_post_set_parameters_callback(apply)
        return

    def validate_then_apply(parameters):
        result = validate(parameters)
        if result.successful:
            apply(parameters)
        return result

    node.add_on_set_parameters_callback(validate_then_apply)


def settle_shut_down_executor(executor) -> None:
    """Let the executor's queued callbacks finish, then mark as seen what their tasks raised.

    The multi-threaded executor (Humble to Kilted) runs callbacks still queued in its pool after
    ``shutdown()``; each one's task then signals the executor's guard condition, which shutdown
    destroyed, and stores InvalidHandle ("destruction was requested"). The callbacks themselves
    ran; nothing retrieves those tasks, so rclpy printed "exception was never retrieved" at exit.
    Kilted's shutdown joins the pool; Humble's and Jazzy's do not, so the pool is joined here,
    before the node is destroyed (a callback run after that would fail on destroyed handles).
    """
    pool = getattr(executor, "_executor", None)  # the multi-threaded executor's thread pool
    if pool is not None:
        pool.shutdown(wait=True)
    for task in list(getattr(executor, "_futures", ())):
        if task.done():
            task.exception()


def shut_down_keeping_signal_handlers(context=None) -> None:
    """Shut the context down and leave the process's SIGINT and SIGTERM handlers alone.

    For a process that installed its own handlers (``SignalHandlerOptions.NO``). Kilted's
    ``try_shutdown`` uninstalls rclpy's handlers even where none were installed, and reads each
    one by setting the default action and then putting the old handler back (strace: SIGINT to
    SIG_DFL and back, 0.1 ms apart). A SIGINT in that moment killed the reward node (exit -2 under
    a burst of SIGINTs, as a Ctrl-C under ros2 launch sends: once in a full test run).
    """
    if "uninstall_handlers" in inspect.signature(rclpy.try_shutdown).parameters:
        rclpy.try_shutdown(context=context, uninstall_handlers=False)
    else:
        rclpy.try_shutdown(context=context)
