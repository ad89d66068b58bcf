# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""reward.launch.py: valid, and refers only to what the package installs.

It really runs when the launch API is available (it is part of every ROS install, but not on PyPI).
"""
import ast
import importlib.util
import os

import pytest
from robo_reward_msgs.msg import RewardEstimate, TaskState

from robo_reward_ros.node.qos_profiles import LATCHED_LISTENER_QOS
from ros_fixtures import (PACKAGE_ROOT, installed_executable, installed_prefix, python_script,
                          spin_until)
from test_entry_points import console_scripts

LAUNCH_FILE = os.path.join(PACKAGE_ROOT, "launch", "reward.launch.py")


def _launch_tree():
    with open(LAUNCH_FILE) as handle:
        return ast.parse(handle.read(), LAUNCH_FILE)


def _node_keywords(tree):
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) in ("Node", "LifecycleNode"):
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


def _tiny_model_args(model_dir):
    return [f"model:={model_dir}", "backend:=robometer", "precision:=fp32", "device:=cpu"]


def _wait_for_scoring(ros_node, processes, instruction):
    states, estimates = [], []
    ros_node.create_subscription(TaskState, "task_state", states.append, LATCHED_LISTENER_QOS)
    ros_node.create_subscription(RewardEstimate, "reward", estimates.append, 10)
    spin_until(ros_node, lambda: states and states[-1].instruction == instruction,
               what="task_state from the launched node", processes=processes)
    spin_until(ros_node, lambda: estimates and estimates[-1].instruction == instruction,
               what="reward estimates from the launched node and camera", processes=processes)
    return estimates[-1]


@pytest.mark.skipif(importlib.util.find_spec("launch_ros") is None,
                    reason="launch_ros is not importable (not on PyPI; comes with a ROS install)")
def test_launch_file_runs_node_and_camera(ros_node, spawn, tiny_robometer_dir):
    launch = spawn(python_script("launch_file_runner.py") + [
        LAUNCH_FILE, "synthetic_camera:=true", "instruction:=step 1: stack the cups",
        "camera_topics:=cam/image_raw", "log_level:=info"] + _tiny_model_args(tiny_robometer_dir),
        name="launch")
    estimate = _wait_for_scoring(ros_node, [launch], "step 1: stack the cups")
    assert estimate.camera == "cam/image_raw" and estimate.backend == "robometer"
    assert launch.interrupt(timeout=30) == 0, launch.output()


def test_entry_point_with_the_launch_files_yaml(ros_node, spawn, tiny_robometer_dir):
    """What the launch file starts, started without launch: same executable, same YAML."""
    camera = spawn([installed_executable("synthetic_camera")])
    overrides = [("model.preset", '""'), ("model.id", tiny_robometer_dir),
                 ("model.backend", "robometer"), ("model.precision", "fp32"),
                 ("model.device", "cpu"), ("instruction", "stack the cups"),
                 ("episode_log.directory", '""')]
    argv = [installed_executable("reward_node"), "--ros-args", "--params-file",
            os.path.join(PACKAGE_ROOT, "config", "reward.yaml")]
    for name, value in overrides:
        argv += ["-p", f"{name}:={value}"]
    node = spawn(argv)
    estimate = _wait_for_scoring(ros_node, [camera, node], "stack the cups")
    assert estimate.backend == "robometer"
    for process in (camera, node):
        assert process.interrupt() == 0, process.output()


@pytest.mark.skipif(importlib.util.find_spec("launch_ros") is None,
                    reason="launch_ros is not importable (not on PyPI; comes with a ROS install)")
def test_every_argument_shows_its_real_default_and_the_readme_says_the_same():
    import re

    from launch.actions import DeclareLaunchArgument
    spec = importlib.util.spec_from_file_location("reward_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    declared = {a.name: "".join(s.perform(None) for s in a.default_value)
                for a in module.generate_launch_description().entities
                if isinstance(a, DeclareLaunchArgument)}
    assert declared["model_preset"] == "robometer-4b-nf4" and declared["device"] == "auto"
    assert declared["camera_topics"] == "camera/image_raw" and declared["autostart"] == "true"
    assert os.path.isfile(declared["params_file"])
    with open(os.path.join(os.path.dirname(PACKAGE_ROOT), "README.md")) as handle:
        readme = handle.read()
    table = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", readme.split("### Launch arguments")[1]
                            .split("###")[0], flags=re.M))
    assert set(table) == set(declared)
    for name, default in declared.items():
        shown = table[name].strip()
        if default and name != "params_file":
            assert shown == f"`{default}`", (name, shown, default)
        elif not default:
            assert shown.startswith("empty"), (name, shown)


@pytest.mark.skipif(importlib.util.find_spec("launch_ros") is None,
                    reason="launch_ros is not importable (not on PyPI; comes with a ROS install)")
def test_no_preset_and_a_namespace_under_launch(ros_node, spawn, tiny_robometer_dir):
    from rcl_interfaces.srv import GetParameters

    from test_reward_node import call
    launch = spawn(python_script("launch_file_runner.py") + [
        LAUNCH_FILE, "namespace:=robot1", "model_preset:=none", "synthetic_camera:=true",
        "instruction:=stack the cups", "camera_topics:=cam/image_raw"]
        + _tiny_model_args(tiny_robometer_dir), name="launch")
    client = ros_node.create_client(GetParameters, "/robot1/reward_node/get_parameters")
    reply = call(ros_node, client, GetParameters.Request(names=["model.preset", "model.id"]),
                 [launch])
    assert [v.string_value for v in reply.values] == ["none", tiny_robometer_dir]
    assert launch.interrupt(timeout=30) == 0, launch.output()
