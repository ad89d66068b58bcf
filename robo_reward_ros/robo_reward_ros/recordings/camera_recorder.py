# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What ``ros2 bag record /camera/image_raw`` would keep of frames a program publishes itself.

A controller that renders its own camera (a simulator, examples/rl_from_node_rewards.py) records
the frames it sent, header stamps and all, so that ``robo-reward finetune --episode-logs`` can cut
them by the node's episode logs, which use the same stamps. Pure Python (rosbags), one MCAP bag.
"""
from __future__ import annotations

import os

import numpy as np

from robo_reward_ros.core.stamps import NANOSECONDS_PER_SECOND, split_seconds
from robo_reward_ros.recordings.typestore import IMAGE_TYPE, kilted_typestore, rgb8_image_cdr


class CameraRecorder:
    """One rosbag2 folder of ``sensor_msgs/Image`` (rgb8) on ``topic``; ``close`` finishes it."""

    def __init__(self, path: str, topic: str = "/camera/image_raw", frame_id: str = "camera") -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer
        if os.path.exists(path):
            raise FileExistsError(f"{path} exists: a recording is never appended to or replaced")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.path = path
        self.frames = 0
        self._store = kilted_typestore()
        self._frame_id = frame_id
        self._writer = Writer(path, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connection = self._writer.add_connection(topic, IMAGE_TYPE, typestore=self._store)

    def write(self, stamp: float, rgb: np.ndarray) -> None:
        """Record one HxWx3 uint8 frame stamped ``stamp`` (seconds; header and log time alike)."""
        sec, nanosec = split_seconds(stamp)  # as the published header has it (node/stamps.to_time)
        nanoseconds = sec * NANOSECONDS_PER_SECOND + nanosec
        self._writer.write(self._connection, nanoseconds, rgb8_image_cdr(self._store, nanoseconds, rgb, self._frame_id))
        self.frames += 1

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> "CameraRecorder":
        return self

    def __exit__(self, *_) -> None:
        self.close()
