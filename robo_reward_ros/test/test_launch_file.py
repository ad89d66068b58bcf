"""reward.launch.py: valid, refers only to what the package installs, and really runs when the
launch API is available (it is part of every ROS install, but not on PyPI)."""
import ast
import importlib.util
import os

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from robo_reward_msgs.msg import TaskState

from robo_reward_ros.reward_node import LATCHED_QOS
from ros_fixtures import PACKAGE_ROOT, installed_prefix, python_script, spin_until
from test_entry_points import console_scripts

LAUNCH_FILE = os.path.join(PACKAGE_ROOT, "launch", "reward.launch.py")


def _launch_tree():
    with open(LAUNCH_FILE) as handle:
        return ast.parse(handle.read(), LAUNCH_FILE)


def _node_keywords(tree):
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Node":
            yield {k.arg: k.value for k in call.keywords}


def test_defines_generate_launch_description():
    functions = [n.name for n in _launch_tree().body if isinstance(n, ast.FunctionDef)]
    assert "generate_launch_description" in functions


def test_nodes_refer_to_installed_executables():
    nodes = list(_node_keywords(_launch_tree()))
    assert nodes, "the launch file starts no Node"
    for keywords in nodes:
        assert ast.literal_eval(keywords["package"]) == "robo_reward_ros"
        executable = ast.literal_eval(keywords["executable"])
        assert executable in console_scripts()
        assert os.access(os.path.join(installed_prefix(), "lib", "robo_reward_ros", executable),
                         os.X_OK)


def test_files_it_names_are_installed():
    share = os.path.join(installed_prefix(), "share", "robo_reward_ros")
    assert os.path.isfile(os.path.join(share, "launch", "reward.launch.py"))
    names = [n.value for n in ast.walk(_launch_tree())
             if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith(".yaml")]
    assert names, "the launch file names no parameter file"
    for name in names:
        assert os.path.isfile(os.path.join(PACKAGE_ROOT, "config", name)), name
        assert os.path.isfile(os.path.join(share, "config", name)), f"{name} is not installed"


@pytest.mark.skipif(importlib.util.find_spec("launch_ros") is None,
                    reason="launch_ros is not importable (not on PyPI; comes with a ROS install)")
def test_launch_file_runs_node_and_camera(ros_node, spawn):
    launch = spawn(python_script("launch_file_runner.py") + [
        LAUNCH_FILE, "synthetic_camera:=true", "instruction:=stack the cups"], name="launch")
    states, diagnostics = [], []
    ros_node.create_subscription(TaskState, "task_state", states.append, LATCHED_QOS)
    ros_node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    spin_until(ros_node, lambda: states and states[-1].instruction == "stack the cups",
               what="task_state from the launched node", processes=[launch])
    spin_until(ros_node, lambda: any(
        kv.key == "frames_received" and int(kv.value) > 0
        for array in diagnostics for status in array.status for kv in status.values),
        what="frames from the launched camera", processes=[launch])
    assert launch.interrupt(timeout=30) == 0, launch.output()
