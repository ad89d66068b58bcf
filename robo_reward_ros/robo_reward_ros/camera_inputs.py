"""Camera subscriptions: decode each frame on arrival, bound its size, hand it to the windows.

Runs on the executor thread and never waits for the model. Every refused frame is counted and
its reason kept for the log and /diagnostics; a QoS mismatch with the camera driver (which
otherwise just looks like silence) is reported the same way.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Callable, Dict, List, Optional

from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_policy_name_from_kind
from sensor_msgs.msg import CompressedImage, Image

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.frame_window import FrameRejected
from robo_reward_ros.core.stamp_guard import StampGuard, StampVerdict
from robo_reward_ros.core.image_decoding import (ImageDecodeError, decode_compressed,
                                                  decode_raw)
from robo_reward_ros.core.node_settings import camera_name


@dataclasses.dataclass
class CameraStats:
    topic: str
    name: str
    compressed: bool
    received: int = 0
    accepted: int = 0
    rejected: int = 0
    received_at_last_report: int = 0
    last_receipt: Optional[float] = None  # time.monotonic() of the last message
    last_error: str = ""
    qos_incompatible: int = 0
    lost: int = 0  # messages the middleware reports lost before they reached us
    stale_reported: bool = False

    def age(self, now: float) -> Optional[float]:
        return None if self.last_receipt is None else now - self.last_receipt


def camera_qos(reliability: str, depth: int) -> QoSProfile:
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=depth,
        reliability=(ReliabilityPolicy.BEST_EFFORT if reliability == "best_effort"
                     else ReliabilityPolicy.RELIABLE))


class CameraInputs:
    def __init__(self, node: Node, topics: List[str], qos: QoSProfile, max_pixels: int,
                 deliver: Callable[[str, Frame], None],
                 new_timeline: Callable[[str, float, str], None],
                 max_stamp_jump_sec: float, new_timeline_frames: int) -> None:
        """``deliver(camera, frame)`` may raise FrameRejected (window rules) or KeyError;
        ``new_timeline(camera, stamp, reason)`` runs before the first frame of a new clock."""
        self._node = node
        self._max_pixels = max_pixels
        self._deliver = deliver
        self._new_timeline = new_timeline
        self._guards: Dict[str, StampGuard] = {}
        self.stats: Dict[str, CameraStats] = {}
        self._subscriptions = []
        for topic in topics:
            compressed = topic.endswith("/compressed")
            stats = CameraStats(topic, camera_name(topic), compressed)
            self.stats[stats.name] = stats
            self._guards[stats.name] = StampGuard(max_stamp_jump_sec, new_timeline_frames)
            callbacks = SubscriptionEventCallbacks(
                incompatible_qos=lambda info, s=stats: self._on_incompatible_qos(s, info),
                message_lost=lambda info, s=stats: self._on_lost(s, info))
            self._subscriptions.append(node.create_subscription(
                CompressedImage if compressed else Image, topic,
                lambda msg, s=stats: self._on_frame(s, msg), qos, event_callbacks=callbacks))

    def destroy(self) -> None:
        for subscription in self._subscriptions:
            self._node.destroy_subscription(subscription)
        self._subscriptions = []

    def _on_frame(self, stats: CameraStats, msg) -> None:
        stats.received += 1
        stats.last_receipt = time.monotonic()
        stats.stale_reported = False
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        check = self._guards[stats.name].check(stamp)
        if check.verdict is StampVerdict.REJECT:
            self._reject(stats, check.reason)
            return
        if check.verdict is StampVerdict.NEW_TIMELINE:
            self._node.get_logger().warning(f"camera {stats.topic}: {check.reason}")
            self._new_timeline(stats.name, stamp, check.reason)
        try:
            # Downscaled inside the decoder (before channel reordering / leaving Pillow): the same
            # pixels as decode-then-fit_pixels, fewer full-size copies.
            if stats.compressed:
                rgb = decode_compressed(msg.format, msg.data, max_pixels=self._max_pixels)
            else:
                rgb = decode_raw(msg.encoding, msg.height, msg.width, msg.step, msg.data,
                                 max_pixels=self._max_pixels)
            self._deliver(stats.name, Frame(stamp, rgb))
        except (ImageDecodeError, FrameRejected) as exc:
            self._reject(stats, str(exc))
            return
        stats.accepted += 1

    def _reject(self, stats: CameraStats, reason: str) -> None:
        stats.rejected += 1
        stats.last_error = reason
        # At most every few seconds per camera, not at camera rate.
        self._node.get_logger().warning(f"camera {stats.topic}: frame rejected: {reason}",
                                        throttle_duration_sec=5.0)

    @staticmethod
    def _on_lost(stats: CameraStats, info) -> None:
        stats.lost = info.total_count

    def _on_incompatible_qos(self, stats: CameraStats, info) -> None:
        stats.qos_incompatible = info.total_count
        reason = (f"QoS incompatible with a publisher on {stats.topic} (policy "
                  f"{qos_policy_name_from_kind(info.last_policy_kind)}): no frames can arrive; set "
                  f"cameras.qos.reliability to match the camera driver")
        stats.last_error = reason
        self._node.get_logger().error(reason)
