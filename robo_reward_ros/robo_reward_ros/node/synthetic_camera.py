# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Publishes the synthetic scene as a camera (sensor_msgs/Image, rgb8) for the demo and tests.

Stands in for the robot's camera driver, not for any part of the reward pipeline.
"""
from __future__ import annotations

import sys

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Image

from robo_reward_ros.simulation.synthetic_scene import render_scene
from robo_reward_ros.node.image_messages import rgb_image
from robo_reward_ros.node.runner import run_node


class SyntheticCamera(Node):
    def __init__(self) -> None:
        super().__init__("synthetic_camera")
        self._width = int(self.declare_parameter("width", 320).value)
        self._height = int(self.declare_parameter("height", 240).value)
        rate_hz = float(self.declare_parameter("rate_hz", 15.0).value)
        self._episode_frames = int(self.declare_parameter("episode_frames", 150).value)
        self._frame_id = str(self.declare_parameter("frame_id", "synthetic_camera").value)
        if self._width <= 0 or self._height <= 0 or rate_hz <= 0.0 or self._episode_frames <= 1:
            raise ValueError("width, height, rate_hz must be > 0 and episode_frames > 1")
        self._publisher = self.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
        self._frame_index = 0
        self.create_timer(1.0 / rate_hz, self._publish_frame)
        self.get_logger().info(
            f"publishing {self._width}x{self._height} rgb8 at {rate_hz:g} Hz on "
            f"{self._publisher.topic_name}")

    def _publish_frame(self) -> None:
        pixels = render_scene(self._frame_index, self._width, self._height, self._episode_frames)
        msg = rgb_image(pixels, self.get_clock().now().to_msg(), self._frame_id)
        self._publisher.publish(msg)
        self._frame_index += 1


def main(args=None) -> int:
    return run_node(SyntheticCamera, args)


if __name__ == "__main__":
    sys.exit(main())
