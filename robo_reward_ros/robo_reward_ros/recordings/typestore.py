# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The rosbags message types every bag here is read and written with (ROS 2 Kilted's definitions)."""


def kilted_typestore():
    """Return rosbags' Kilted typestore; a RuntimeError that says what to install without rosbags."""
    try:
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        raise RuntimeError("reading and writing bags needs rosbags: pip install rosbags "
                           "(pinned in requirements/)") from None
    return get_typestore(Stores.ROS2_KILTED)
