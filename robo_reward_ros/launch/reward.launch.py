# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Start the reward node (a lifecycle node that activates itself unless autostart:=false).

    ros2 launch robo_reward_ros reward.launch.py
    ros2 launch robo_reward_ros reward.launch.py camera_topics:=/front/image_raw,/wrist/image_raw/compressed
    ros2 launch robo_reward_ros reward.launch.py model_preset:=roboreward-4b instruction:="open the drawer"
    ros2 launch robo_reward_ros reward.launch.py model_preset:=demo instruction:="push the puck to the goal"
    ros2 launch robo_reward_ros reward.launch.py model_preset:=none model:=/models/my_robometer backend:=robometer
    ros2 launch robo_reward_ros reward.launch.py --show-args

An argument that maps to a node parameter defaults to that parameter's value in the installed
config/reward.yaml; given a different value, it overrides params_file. Empty defaults mean "not
set" (ros2 launch refuses NAME:="": choose no preset with model_preset:=none).
"""
import os
from typing import List

import yaml
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node
from launch_ros.parameter_descriptions import ParameterValue

from robo_reward_ros.models.loading.presets import PRESETS

# argument -> (node parameter or None, description)
ARGUMENTS = {
    "params_file": (None, "YAML file with the node's parameters (keyed /** to match any "
                          "namespace; start from a copy of the installed one)"),
    "namespace": (None, "namespace for the node and its topics (e.g. robot1)"),
    "log_level": (None, "logging level: debug, info, warn, error"),
    "autostart": ("autostart", "configure and activate without a lifecycle manager"),
    "camera_topics": ("cameras.topics",
                      "comma-separated camera topics (…/compressed: CompressedImage)"),
    "model_preset": ("model.preset", f"{', '.join(PRESETS)}, or none (then model and backend say "
                                     "what to load); demo: the small model installed with the "
                                     "package, offline"),
    "model": ("model.id", "model id or local checkpoint directory, or http://HOST:PORT with "
                          "backend remote (default: the preset's)"),
    "backend": ("model.backend", "robometer, roboreward, topreward, auto, or remote (a robo-reward "
                                 "serve server) (default: the preset's)"),
    "precision": ("model.precision",
                  "fp32, bf16, fp16, nf4, int8, int8wo or int4wo (default: the preset's)"),
    "device": ("model.device", "auto, cuda, cuda:N or cpu"),
    "instruction": ("instruction", "instruction of a one-stage task to start with (default: "
                                   "wait for a task)"),
    "synthetic_camera": (None, "also start a synthetic camera on the first camera topic"),
    "overlay": (None, "also start operator_overlay: the first camera's frames with the reward drawn on "
                      "them, on overlay/image_raw"),
}


def _installed_params_file() -> str:
    return os.path.join(get_package_share_directory("robo_reward_ros"), "config", "reward.yaml")


def _as_argument(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def _defaults() -> dict:
    """Each argument's default: for a node parameter, its value in the installed YAML."""
    with open(_installed_params_file(), encoding="utf-8") as handle:
        (parameters,) = [v["ros__parameters"] for v in yaml.safe_load(handle).values()]
    defaults = {"params_file": _installed_params_file(), "namespace": "", "log_level": "info",
                "synthetic_camera": "false", "overlay": "false"}
    for argument, (parameter, _) in ARGUMENTS.items():
        if parameter is not None:
            defaults[argument] = _as_argument(parameters[parameter])
    return defaults


def _nodes(context, defaults):
    value = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    # Only what differs from the installed defaults overrides params_file, so a user's file
    # keeps its own values for the arguments not given.
    changed = {name for name in ARGUMENTS if value[name] != defaults[name]}
    overrides = {}
    for argument, (parameter, _) in ARGUMENTS.items():
        if parameter is None or argument not in changed:
            continue
        if argument == "camera_topics":
            topics = [t.strip() for t in value[argument].split(",") if t.strip()]
            overrides[parameter] = ParameterValue(topics, value_type=List[str])
        elif argument == "autostart":
            overrides[parameter] = value[argument].lower() in ("true", "1", "yes")
        else:
            # Typed: launch would otherwise read a string as YAML ("step 1: open" -> a dict).
            overrides[parameter] = ParameterValue(value[argument], value_type=str)
    log_args = ["--ros-args", "--log-level", value["log_level"]]
    camera_topic = value["camera_topics"].split(",")[0].strip() or "camera/image_raw"
    return [
        LifecycleNode(
            package="robo_reward_ros", executable="reward_node", name="reward_node",
            namespace=value["namespace"], output="screen",
            parameters=[value["params_file"], overrides], arguments=log_args),
        Node(
            package="robo_reward_ros", executable="synthetic_camera", name="synthetic_camera",
            namespace=value["namespace"], output="screen", arguments=log_args,
            condition=IfCondition(value["synthetic_camera"]),
            remappings=[("camera/image_raw", camera_topic)]),
        Node(
            package="robo_reward_ros", executable="operator_overlay", name="operator_overlay",
            namespace=value["namespace"], output="screen", arguments=log_args,
            condition=IfCondition(value["overlay"]), parameters=[{"camera_topic": camera_topic}]),
    ]


def generate_launch_description():
    defaults = _defaults()
    declared = [DeclareLaunchArgument(name, default_value=defaults[name], description=text)
                for name, (_, text) in ARGUMENTS.items()]
    return LaunchDescription(declared + [OpaqueFunction(function=_nodes, args=[defaults])])
