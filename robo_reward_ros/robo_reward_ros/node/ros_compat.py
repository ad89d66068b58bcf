"""The rclpy API differences between the distros the node runs on (Humble, Jazzy, Kilted).

Kept in one place so the rest of the node is written against one API.
"""
from __future__ import annotations

from typing import Callable


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
