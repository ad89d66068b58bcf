# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Which environment variable names a Fast DDS XML profiles file for the installed ROS 2.

Fast DDS 3 (Kilted on) reads FASTDDS_DEFAULT_PROFILES_FILE; Fast DDS 2 (Humble, Jazzy) reads only
FASTRTPS_DEFAULT_PROFILES_FILE (checked on Jazzy: with the other name the profile is ignored).
"""
import os
from importlib import metadata


def fastdds_major_version() -> int:
    """Read it from the ROS 2 wheels' metadata, or from the distro of a sourced ROS install."""
    for wheel in ("ros-fastdds", "ros-fastrtps"):  # Fast DDS 3's wheel, Fast DDS 2's
        try:
            return int(metadata.version(wheel).split(".")[0])
        except metadata.PackageNotFoundError:
            continue
    return 2 if os.environ.get("ROS_DISTRO") in ("humble", "jazzy") else 3


def fastdds_profile_variable() -> str:
    """Name the variable the installed Fast DDS reads its profiles file from."""
    return ("FASTDDS_DEFAULT_PROFILES_FILE" if fastdds_major_version() >= 3
            else "FASTRTPS_DEFAULT_PROFILES_FILE")
