# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""RGB pixels as a ``sensor_msgs/Image``: what the synthetic camera, the overlay and the live replay publish."""
import numpy as np
from sensor_msgs.msg import Image


def rgb_image(rgb: np.ndarray, stamp, frame_id: str) -> Image:
    """Return an ``rgb8`` Image of an HxWx3 uint8 array, stamped ``stamp`` (a Time message)."""
    msg = Image()
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.height, msg.width = rgb.shape[:2]
    msg.encoding = "rgb8"
    msg.step = msg.width * 3
    msg.data = rgb.tobytes()  # bytes, not an array: far faster to assign
    return msg
