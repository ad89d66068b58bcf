# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Runs reward.launch.py with the real launch API, in its own process (as `ros2 launch` does).

Usage: python launch_file_runner.py LAUNCH_FILE [name:=value ...]; stops on SIGINT.
"""
import sys

from launch import LaunchDescription, LaunchService
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource


def main() -> int:
    path, arguments = sys.argv[1], [a.split(":=", 1) for a in sys.argv[2:]]
    service = LaunchService()
    service.include_launch_description(LaunchDescription([IncludeLaunchDescription(
        PythonLaunchDescriptionSource(path), launch_arguments=arguments)]))
    return service.run()


if __name__ == "__main__":
    sys.exit(main())
