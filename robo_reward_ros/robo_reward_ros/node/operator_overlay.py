# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``operator_overlay``: the newest camera frame with the reward node's view drawn on it.

For rqt_image_view or Foxglove. A node of its own beside the reward node (off unless started:
``reward.launch.py overlay:=true`` or ``ros2 run robo_reward_ros operator_overlay``), so drawing
never takes time from scoring. It
listens to one camera and to the reward node's outputs (``reward``, ``task_state``,
``failure_events``, relative names: same namespace) and publishes, at most ``rate_hz`` times a
second, only when a new frame came and someone subscribes, ``overlay/image_raw`` (``sensor_msgs/Image`` rgb8) and,
unless ``compressed:=false``, ``overlay/image_raw/compressed`` (JPEG). A frame that cannot be
decoded is logged (throttled) and skipped.
"""
from __future__ import annotations

import io
import sys
from typing import Optional

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import CompressedImage, Image

from robo_reward_msgs.msg import FailureEvent, RewardEstimate, TaskState
from robo_reward_ros.core.events import FailureKind, TaskStatus
from robo_reward_ros.core.image_decoding import ImageDecodeError, decode_compressed, decode_raw
from robo_reward_ros.settings.node_settings import camera_name
from robo_reward_ros.core.operator_overlay import OverlayState, draw_overlay
from robo_reward_ros.node.image_messages import rgb_image
from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_LISTENER_QOS
from robo_reward_ros.node.runner import run_node

OVERLAY_TOPIC = "overlay/image_raw"


class OperatorOverlay(Node):
    def __init__(self) -> None:
        super().__init__("operator_overlay")
        self._camera_topic = str(self.declare_parameter("camera_topic", "camera/image_raw").value)
        rate_hz = float(self.declare_parameter("rate_hz", 2.0).value)
        compressed = bool(self.declare_parameter("compressed", True).value)
        self._max_pixels = int(self.declare_parameter("max_pixels", 640 * 480).value)
        self._jpeg_quality = int(self.declare_parameter("jpeg_quality", 80).value)
        if rate_hz <= 0.0 or self._max_pixels <= 0 or not 1 <= self._jpeg_quality <= 100:
            raise ValueError("rate_hz and max_pixels must be > 0, jpeg_quality in [1, 100]")
        self._camera = camera_name(self._camera_topic)
        self._frame = None  # the newest camera message, decoded only when drawn
        self._drawn = None
        self._state = OverlayState()
        self._own_estimates = False
        is_compressed = self._camera_topic.endswith("/compressed")
        self.create_subscription(CompressedImage if is_compressed else Image, self._camera_topic,
                                 self._on_frame, qos_profile_sensor_data)
        self.create_subscription(RewardEstimate, "reward", self._on_estimate, EVENTS_QOS)
        self.create_subscription(TaskState, "task_state", self._on_state, LATCHED_LISTENER_QOS)
        self.create_subscription(FailureEvent, "failure_events", self._on_failure, EVENTS_QOS)
        self._raw = self.create_publisher(Image, OVERLAY_TOPIC, 1)
        self._jpeg = self.create_publisher(CompressedImage, OVERLAY_TOPIC + "/compressed", 1) if compressed else None
        self.create_timer(1.0 / rate_hz, self._publish)
        self.get_logger().info(f"overlay of {self._camera_topic} on {self._raw.topic_name} at most {rate_hz:g} Hz")

    # --- inputs ---------------------------------------------------------------------------------
    def _on_frame(self, msg) -> None:
        self._frame = msg

    def _on_estimate(self, msg: RewardEstimate) -> None:
        own = msg.camera in (self._camera, self._camera_topic)
        if not own and self._own_estimates:
            return  # another camera's: this overlay shows its own camera's once it has one
        self._own_estimates = self._own_estimates or own
        self._state.progress = float(msg.progress)
        self._state.success_probability = float(msg.success_probability) if msg.has_success_probability else None

    def _on_state(self, msg: TaskState) -> None:
        self._state.instruction = msg.instruction
        self._state.stage_index, self._state.stage_count = int(msg.stage_index), int(msg.stage_count)
        self._state.status = TaskStatus(msg.status).name.lower().replace("_", " ")

    def _on_failure(self, msg: FailureEvent) -> None:
        try:
            kind = FailureKind(msg.kind).name.lower()
        except ValueError:
            kind = f"kind {msg.kind}"
        self._state.failure = f"{kind}: {msg.description}"

    # --- output ---------------------------------------------------------------------------------
    def _publish(self) -> None:
        frame = self._frame
        if frame is None or frame is self._drawn or not self._watched():
            return
        self._drawn = frame
        try:
            rgb = self._decode(frame)
        except ImageDecodeError as exc:
            self.get_logger().warning(f"{self._camera_topic}: frame skipped: {exc}", throttle_duration_sec=5.0)
            return
        pixels = draw_overlay(rgb, self._state)
        msg = rgb_image(pixels, frame.header.stamp, frame.header.frame_id)
        self._raw.publish(msg)
        if self._jpeg is not None:
            self._jpeg.publish(self._as_jpeg(pixels, frame.header))

    def _watched(self) -> bool:
        """Draw only for someone: an unwatched overlay costs nothing but its subscriptions."""
        return self._raw.get_subscription_count() > 0 or (
            self._jpeg is not None and self._jpeg.get_subscription_count() > 0)

    def _decode(self, frame):
        if isinstance(frame, CompressedImage):
            return decode_compressed(frame.format, bytes(frame.data), max_pixels=self._max_pixels)
        return decode_raw(frame.encoding, frame.height, frame.width, frame.step, bytes(frame.data),
                          max_pixels=self._max_pixels)

    def _as_jpeg(self, pixels, header) -> CompressedImage:
        from PIL import Image as PILImage
        buffer = io.BytesIO()
        PILImage.fromarray(pixels).save(buffer, format="JPEG", quality=self._jpeg_quality)
        msg = CompressedImage()
        msg.header = header
        msg.format = "rgb8; jpeg compressed bgr8"
        msg.data = buffer.getvalue()
        return msg


def main(args: Optional[list] = None) -> int:
    return run_node(OperatorOverlay, args)


if __name__ == "__main__":
    sys.exit(main())
