"""The rclpy API differences between the distros the node runs on (Humble, Jazzy, Kilted).

Kept in one place so the rest of the node is written against one API. Read against the humble
(3.3) and jazzy (7.1) branches of ros2/rclpy and the Kilted 9.1 wheel; everything else the node
uses is the same on all three:
- ``rclpy.event_handler`` (Iron on) is ``rclpy.qos_event`` on Humble (Jazzy and Kilted keep a
  deprecated ``qos_event`` shim that warns on import, so the new name is tried first);
- ``Node.add_post_set_parameters_callback`` (Iron on) does not exist on Humble;
- ``Executor.shutdown()`` waits for callbacks in progress on Humble: the runner passes a timeout.
"""
from __future__ import annotations

from typing import Callable

try:  # Iron and later
    from rclpy.event_handler import SubscriptionEventCallbacks
except ImportError:  # Humble: the same class, in its old module
    from rclpy.qos_event import SubscriptionEventCallbacks

__all__ = ["SubscriptionEventCallbacks", "on_parameters_set"]


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
