# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The rosbags message types every bag here is read and written with (ROS 2 Kilted's definitions)."""

IMAGE_TYPE = "sensor_msgs/msg/Image"


def kilted_typestore():
    """Return rosbags' Kilted typestore; a RuntimeError that says what to install without rosbags."""
    try:
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        raise RuntimeError("reading and writing bags needs rosbags: pip install rosbags "
                           "(pinned in requirements/)") from None
    return get_typestore(Stores.ROS2_KILTED)


def rgb8_image_cdr(store, stamp_ns: int, rgb, frame_id: str) -> bytes:
    """Return an HxWx3 uint8 frame as a serialised ``sensor_msgs/msg/Image`` (rgb8) stamped ``stamp_ns``.

    Every bag writer here stores decoded frames this way; the header stamp is the bag's log time.
    """
    import numpy as np
    from robo_reward_ros.core.stamps import split_nanoseconds
    types = store.types
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    height, width = rgb.shape[:2]
    header = types["std_msgs/msg/Header"](stamp=types["builtin_interfaces/msg/Time"](*split_nanoseconds(stamp_ns)),
                                          frame_id=frame_id)
    msg = types[IMAGE_TYPE](header=header, height=height, width=width, encoding="rgb8", is_bigendian=0,
                            step=width * 3, data=rgb.reshape(-1))
    return store.serialize_cdr(msg, IMAGE_TYPE)
