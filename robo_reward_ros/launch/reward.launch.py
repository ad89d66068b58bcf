"""Starts the reward node (a lifecycle node that activates itself unless autostart:=false).

    ros2 launch robo_reward_ros reward.launch.py
    ros2 launch robo_reward_ros reward.launch.py camera_topics:=/front/image_raw,/wrist/image_raw/compressed
    ros2 launch robo_reward_ros reward.launch.py model_preset:=roboreward-4b instruction:="open the drawer"
    ros2 launch robo_reward_ros reward.launch.py model_preset:="" model:=/models/my_robometer backend:=robometer

Arguments left empty keep the value from params_file (config/reward.yaml by default).
"""
import os
from typing import List

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node
from launch_ros.parameter_descriptions import ParameterValue

# launch argument -> node parameter, applied only when the argument is not empty.
OVERRIDES = {
    "model_preset": "model.preset",
    "model": "model.id",
    "backend": "model.backend",
    "precision": "model.precision",
    "device": "model.device",
    "instruction": "instruction",
}
ARGUMENTS = {
    "params_file": ("", "YAML file with the node's parameters (default: the installed "
                        "config/reward.yaml)"),
    "namespace": ("", "namespace for the node and its topics"),
    "log_level": ("info", "logging level: debug, info, warn, error"),
    "autostart": ("true", "configure and activate without a lifecycle manager"),
    "camera_topics": ("", "comma-separated camera topics (…/compressed: CompressedImage)"),
    "model_preset": ("", "robometer-4b-nf4, robometer-4b, roboreward-4b, roboreward-8b, "
                         "topreward-qwen3vl-8b, topreward-qwen3vl-4b"),
    "model": ("", "model id or local checkpoint directory"),
    "backend": ("", "robometer, roboreward, topreward or auto"),
    "precision": ("", "fp32, bf16, fp16, nf4 or int8"),
    "device": ("", "auto, cuda, cuda:N or cpu"),
    "instruction": ("", "instruction of a one-stage task to start with"),
    "synthetic_camera": ("false", "also start a synthetic camera on the first camera topic"),
}


def _nodes(context):
    value = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    params_file = value["params_file"] or os.path.join(
        get_package_share_directory("robo_reward_ros"), "config", "reward.yaml")
    # ParameterValue with a type: launch would otherwise read a string as YAML (an instruction
    # like "step 1: open" would become a dict).
    overrides = {param: ParameterValue(value[arg], value_type=str)
                 for arg, param in OVERRIDES.items() if value[arg]}
    topics = [t.strip() for t in value["camera_topics"].split(",") if t.strip()]
    if topics:
        overrides["cameras.topics"] = ParameterValue(topics, value_type=List[str])
    overrides["autostart"] = value["autostart"].lower() in ("true", "1", "yes")
    log_args = ["--ros-args", "--log-level", value["log_level"]]
    camera_topic = topics[0] if topics else "camera/image_raw"
    return [
        LifecycleNode(
            package="robo_reward_ros", executable="reward_node", name="reward_node",
            namespace=value["namespace"], output="screen", emulate_tty=True,
            parameters=[params_file, overrides], arguments=log_args),
        Node(
            package="robo_reward_ros", executable="synthetic_camera", name="synthetic_camera",
            namespace=value["namespace"], output="screen", arguments=log_args,
            condition=IfCondition(value["synthetic_camera"]),
            remappings=[("camera/image_raw", camera_topic)]),
    ]


def generate_launch_description():
    declared = [DeclareLaunchArgument(name, default_value=default, description=text)
                for name, (default, text) in ARGUMENTS.items()]
    return LaunchDescription(declared + [OpaqueFunction(function=_nodes)])
