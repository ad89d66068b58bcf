"""The compatibility module's code paths, each on the real rclpy of this venv.

Humble's path is taken by hiding the API it lacks.
"""
import pytest
import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter

from robo_reward_ros.node.ros_compat import on_parameters_set


class HumbleNode(Node):
    """A node without the post-set parameter callback (added to rclpy after Humble)."""

    @property
    def add_post_set_parameters_callback(self):
        raise AttributeError("not in Humble's rclpy")


@pytest.mark.parametrize("node_class", [Node, HumbleNode], ids=["post-set callback", "humble"])
def test_a_change_is_validated_before_and_applied_after_it_is_set(node_class):
    context = rclpy.Context()
    rclpy.init(context=context)
    node = node_class("compat_probe", context=context)
    try:
        assert hasattr(node, "add_post_set_parameters_callback") is (node_class is Node)
        node.declare_parameter("success.k", 2)
        applied = []

        def validate(parameters):
            ok = all(p.value >= 1 for p in parameters)
            return SetParametersResult(successful=ok, reason="" if ok else "success.k must be >= 1")

        on_parameters_set(node, validate, lambda parameters: applied.append(
            [(p.name, p.value) for p in parameters]))
        assert node.set_parameters([Parameter("success.k", value=3)])[0].successful
        refused = node.set_parameters([Parameter("success.k", value=0)])[0]
        assert not refused.successful and refused.reason == "success.k must be >= 1"
        assert applied == [[("success.k", 3)]]
        assert node.get_parameter("success.k").value == 3
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
