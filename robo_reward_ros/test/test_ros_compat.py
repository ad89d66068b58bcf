# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
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


def test_the_node_scores_frames_on_humbles_rclpy_api(ros_node, spawn):
    """The installed node with what Humble's rclpy lacks hidden (test/humble_rclpy)."""
    import os

    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.msg import ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    from ros_fixtures import SCRIPTED_ENV, TEST_DIR, reward_node_argv, spin_until
    from scripted_backend import painted
    from test_reward_node import Listener, call, rgb_image

    env = dict(SCRIPTED_ENV)
    env["PYTHONPATH"] = os.path.join(TEST_DIR, "humble_rclpy") + os.pathsep + env["PYTHONPATH"]
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0"), env=env)
    listen = Listener(ros_node)
    camera = ros_node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
    stamp = [100.0]

    def publish_and_check():
        stamp[0] += 0.1
        camera.publish(rgb_image(painted(0.4, 0.1), stamp[0]))
        return len(listen.estimates) >= 3

    spin_until(ros_node, publish_and_check, what="estimates on Humble's API", processes=[node])
    assert "rclpy.event_handler and Node.add_post_set_parameters_callback hidden" in node.output()
    client = ros_node.create_client(SetParameters, "/reward_node/set_parameters")

    def set_k(value):
        request = SetParameters.Request(parameters=[ParameterMsg(name="success.k", value=ParameterValue(
            type=ParameterType.PARAMETER_INTEGER, integer_value=value))])
        return call(ros_node, client, request, [node]).results[0]

    assert set_k(1).successful
    refused = set_k(9)
    assert not refused.successful and "success.k must be in [1, success.n]" in refused.reason
    assert node.interrupt() == 0, node.output()


SHUT_DOWN_PROBE = r"""
import inspect, signal, sys
import rclpy
from rclpy.signals import SignalHandlerOptions
from robo_reward_ros.node import ros_compat

uninstalled, calls = [], []
rclpy.uninstall_signal_handlers = lambda: uninstalled.append(True)  # Kilted's try_shutdown calls it
if sys.argv[1] == "humble":  # Humble's and Jazzy's try_shutdown: no uninstall_handlers, uninstalls nothing
    real = rclpy.try_shutdown
    keep = {"uninstall_handlers": False} if "uninstall_handlers" in inspect.signature(real).parameters else {}
    def try_shutdown(*, context=None):
        calls.append(context)
        real(context=context, **keep)
    rclpy.try_shutdown = try_shutdown
rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
def mine(*_):
    pass
signal.signal(signal.SIGINT, mine)
ros_compat.shut_down_keeping_signal_handlers()
print(f"ok={rclpy.ok()} uninstalled={bool(uninstalled)} handler={signal.getsignal(signal.SIGINT) is mine}"
      f" humble_calls={calls}")
"""


@pytest.mark.parametrize("api", ["this distro", "humble"])
def test_shutting_down_leaves_the_processs_signal_handlers_alone(api):
    """Kilted's try_shutdown set SIGINT to SIG_DFL for a moment: a SIGINT then killed the node (exit -2)."""
    import os
    import subprocess
    import sys

    from ros_fixtures import PACKAGE_ROOT  # this checkout's package, not the installed copy
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", SHUT_DOWN_PROBE, api.split()[0]], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert "ok=False uninstalled=False handler=True" in done.stdout, done.stdout + done.stderr
    assert ("humble_calls=[None]" in done.stdout) is (api == "humble"), done.stdout
