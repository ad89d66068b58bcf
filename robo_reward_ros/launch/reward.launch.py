"""Starts the reward node with its YAML parameters; optionally a synthetic camera for a demo.

    ros2 launch robo_reward_ros reward.launch.py
    ros2 launch robo_reward_ros reward.launch.py camera_topic:=/front/image_raw
    ros2 launch robo_reward_ros reward.launch.py synthetic_camera:=true instruction:="put the red block on the green square"
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue


def generate_launch_description():
    share = get_package_share_directory("robo_reward_ros")
    camera_topic = LaunchConfiguration("camera_topic")
    return LaunchDescription([
        DeclareLaunchArgument(
            "params_file", default_value=os.path.join(share, "config", "reward.yaml"),
            description="YAML file with the reward node's parameters"),
        DeclareLaunchArgument(
            "camera_topic", default_value="camera/image_raw",
            description="sensor_msgs/Image topic of the camera to score"),
        DeclareLaunchArgument(
            "instruction", default_value="",
            description="instruction of a one-stage task to start with (empty: wait for a task)"),
        DeclareLaunchArgument(
            "synthetic_camera", default_value="false",
            description="also start a synthetic camera publishing on camera_topic (demo/testing)"),
        Node(
            package="robo_reward_ros", executable="reward_node", name="reward_node",
            output="screen", emulate_tty=True,
            parameters=[LaunchConfiguration("params_file"), {
                # A list of substitutions would be joined into one string; a list of lists is
                # a string array. The instruction must stay text even if it looks like YAML.
                "camera_topics": [[camera_topic]],
                "instruction": ParameterValue(LaunchConfiguration("instruction"), value_type=str),
            }]),
        Node(
            package="robo_reward_ros", executable="synthetic_camera", name="synthetic_camera",
            output="screen", condition=IfCondition(LaunchConfiguration("synthetic_camera")),
            remappings=[("camera/image_raw", camera_topic)]),
    ])
