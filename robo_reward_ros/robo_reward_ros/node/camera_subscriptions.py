# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Camera subscriptions: each message's fields go to the frame intake, nothing more.

Runs on the executor thread and never waits for the model. Stamp checks, decoding, counts and
stale detection live in ``core/frame_intake.py`` (shared with the offline replay); here only the
ROS side: the subscriptions, a QoS mismatch with the camera driver (which otherwise just looks
like silence) and messages the middleware reports lost.
"""
from __future__ import annotations

import contextlib
from typing import Callable, ContextManager, List

from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_policy_name_from_kind
from sensor_msgs.msg import CompressedImage, Image

from robo_reward_ros.core.frame_intake import CameraStats, FrameIntake, IntakeResult
from robo_reward_ros.core.log_text import escape_controls
from robo_reward_ros.core.stamps import to_seconds
from robo_reward_ros.node.ros_compat import SubscriptionEventCallbacks


def camera_qos(reliability: str, depth: int) -> QoSProfile:
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=depth,
        reliability=(ReliabilityPolicy.BEST_EFFORT if reliability == "best_effort"
                     else ReliabilityPolicy.RELIABLE))


class CameraSubscriptions:
    def __init__(self, node: Node, intake: FrameIntake, qos: QoSProfile,
                 on_result: Callable[[str, IntakeResult], None],
                 lock: ContextManager = contextlib.nullcontext()) -> None:
        """``on_result(camera, result)`` runs after every frame, on an executor thread.

        Each frame is taken in under ``lock`` (the node's state lock: no frame lands half-way
        through a lifecycle transition).
        """
        self._node = node
        self._lock = lock
        self._intake = intake
        self._on_result = on_result
        self._subscriptions: List = []
        for stats in intake.stats.values():
            callbacks = SubscriptionEventCallbacks(
                incompatible_qos=lambda info, s=stats: self._on_incompatible_qos(s, info),
                message_lost=lambda info, s=stats: setattr(s, "lost", info.total_count))
            self._subscriptions.append(node.create_subscription(
                CompressedImage if stats.compressed else Image, stats.topic,
                lambda msg, s=stats: self._on_frame(s, msg), qos, event_callbacks=callbacks))

    def destroy(self) -> None:
        for subscription in self._subscriptions:
            self._node.destroy_subscription(subscription)
        self._subscriptions = []

    def _on_frame(self, stats: CameraStats, msg) -> None:
        with self._lock:
            self._take_frame(stats, msg)

    def _take_frame(self, stats: CameraStats, msg) -> None:
        stamp = to_seconds(msg.header.stamp)
        frame_id = msg.header.frame_id
        if stats.compressed:
            result = self._intake.receive_compressed(stats.name, stamp, msg.format, msg.data,
                                                     frame_id)
        else:
            result = self._intake.receive_raw(stats.name, stamp, msg.encoding, msg.height,
                                              msg.width, msg.step, msg.data, frame_id)
        if result.new_timeline:
            self._node.get_logger().warning(escape_controls(f"camera {stats.topic}: {result.new_timeline}"))
        if result.rejected_because:
            # At most every few seconds per camera, not at camera rate.
            self._node.get_logger().warning(
                escape_controls(f"camera {stats.topic}: frame rejected: {result.rejected_because}"),
                throttle_duration_sec=5.0)
        self._on_result(stats.name, result)

    def _on_incompatible_qos(self, stats: CameraStats, info) -> None:
        stats.qos_incompatible = info.total_count
        reason = (f"QoS incompatible with a publisher on {stats.topic} (policy "
                  f"{qos_policy_name_from_kind(info.last_policy_kind)}): no frames can arrive; set "
                  f"cameras.qos.reliability to match the camera driver")
        stats.last_error = reason
        self._node.get_logger().error(reason)
