# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The one way frames enter the reward pipeline, live or offline.

The node's camera callbacks and the offline replay both hand frames here, so both accept and
refuse the same frames: the stamp guard (a clock that jumps restarts the episode on the new
timeline), downscaling to ``max_pixels``, the window rules, per-camera counts for diagnostics,
the frame clock that time limits run on, and stale-camera detection. Callers only translate
their messages to the fields below and act on what comes back (publish, log, wake the worker).

``clock`` is wall time live (``time.monotonic``); a replay passes a clock that follows the
recording's stamps, so a gap in a bag looks like the same silent camera the node would see.
"""
from __future__ import annotations

import dataclasses
import re
import time
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.frame_window import FrameRejected
from robo_reward_ros.core.image_decoding import (ImageDecodeError, decode_compressed, decode_raw,
                                                 fit_pixels)
from robo_reward_ros.core.monitor_update import MonitorUpdate
from robo_reward_ros.core.reward_pipeline import RewardPipeline
from robo_reward_ros.core.stamp_gaps import StampGapEstimator
from robo_reward_ros.core.stamp_guard import StampGuard, StampVerdict


class ManualClock:
    """A clock that reads what it was set to: a replay's (the recording's stamps) or a test's."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclasses.dataclass
class CameraStats:
    """What one camera delivered, for /diagnostics and logs."""

    name: str
    topic: str = ""
    compressed: bool = False
    received: int = 0
    accepted: int = 0
    rejected: int = 0
    received_at_last_report: int = 0
    last_receipt: Optional[float] = None  # intake clock time of the last frame
    first_receipt: Optional[float] = None
    last_accepted: Optional[float] = None  # ... of the last frame the intake took
    refused_since_accepted: int = 0
    last_error: str = ""
    qos_incompatible: int = 0
    lost: int = 0  # frames the transport reports lost before they reached the intake
    stale_reported: bool = False
    frame_id: str = ""  # the newest accepted frame's coordinate frame (its header.frame_id)
    # Refused frames by reason (numbers left out, so "went back 0.1 s" and "0.2 s" are one
    # reason): reason -> [count, the first such message].
    refusals: Dict[str, list] = dataclasses.field(default_factory=dict)
    # Frames the publisher stamped that never arrived (loss the transport does not report).
    gaps: StampGapEstimator = dataclasses.field(default_factory=StampGapEstimator)

    def age(self, now: float) -> Optional[float]:
        return None if self.last_receipt is None else now - self.last_receipt

    def usable_age(self, now: float) -> Optional[float]:
        """Seconds since the last frame the intake took (since the first one came, if none was)."""
        since = self.last_accepted if self.last_accepted is not None else self.first_receipt
        return None if since is None else now - since

    def unusable_reason(self) -> str:
        """Why no usable frame came: every frame since the last good one refused, or none came."""
        if self.refused_since_accepted:
            return f"{self.refused_since_accepted} frame(s) came and were refused: {self.last_error}"
        return ""

    def refuse(self, reason: str) -> None:
        self.rejected += 1
        self.refused_since_accepted += 1
        self.last_error = reason
        entry = self.refusals.setdefault(_NUMBER.sub("#", reason), [0, reason])
        entry[0] += 1

    def refusal_counts(self) -> List[tuple]:
        """(count, an example message) per reason, the commonest first."""
        return sorted((tuple(entry) for entry in self.refusals.values()), key=lambda item: -item[0])


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclasses.dataclass(frozen=True)
class IntakeResult:
    """What became of one frame: the caller publishes ``updates`` and logs the reasons."""

    accepted: bool
    rejected_because: str = ""
    new_timeline: str = ""  # the camera's clock changed for good: the episode restarted
    updates: Sequence[MonitorUpdate] = ()


class FrameIntake:
    def __init__(self, pipeline: RewardPipeline, max_pixels: int,
                 max_stamp_jump_sec: float = 5.0, new_timeline_frames: int = 10,
                 topics: Optional[Dict[str, str]] = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``topics``: camera name -> topic (for reports); by default the pipeline's cameras."""
        self.pipeline = pipeline
        self.max_pixels = max_pixels
        self.clock = clock
        topics = topics or {camera: camera for camera in pipeline.windows}
        self.stats: Dict[str, CameraStats] = {
            name: CameraStats(name, topic, topic.endswith("/compressed"))
            for name, topic in topics.items()}
        self._guards = {name: StampGuard(max_stamp_jump_sec, new_timeline_frames)
                        for name in topics}
        # The loaded model's own limits (an aspect ratio it refuses): such frames are refused here,
        # with the reason, instead of failing every step while they are in the window.
        self._frame_problem = getattr(pipeline.model, "frame_problem", None)
        self._latest_stamp: Optional[float] = None  # newest frame stamp, and when it arrived
        self._latest_receipt = 0.0

    # --- frames -----------------------------------------------------------------------------
    def receive_raw(self, camera: str, stamp: float, encoding: str, height: int, width: int,
                    step: int, data, frame_id: str = "") -> IntakeResult:
        """Receive a sensor_msgs/Image's fields (downscaled inside the decoder: fewer full-size copies)."""
        return self._receive(camera, stamp, lambda: decode_raw(
            encoding, height, width, step, data, max_pixels=self.max_pixels), frame_id)

    def receive_compressed(self, camera: str, stamp: float, format_field: str, data,
                           frame_id: str = "") -> IntakeResult:
        """Receive a sensor_msgs/CompressedImage's fields."""
        return self._receive(camera, stamp, lambda: decode_compressed(
            format_field, data, max_pixels=self.max_pixels), frame_id)

    def receive_rgb(self, camera: str, stamp: float, rgb: np.ndarray) -> IntakeResult:
        """Receive an already decoded RGB frame (bags, videos, tests)."""
        return self._receive(camera, stamp, lambda: fit_pixels(rgb, self.max_pixels))

    def _receive(self, camera: str, stamp: float, decode: Callable[[], np.ndarray],
                 frame_id: str = "") -> IntakeResult:
        stats = self.stats[camera]
        now = self.clock()
        stats.received += 1
        stats.last_receipt = now
        if stats.first_receipt is None:
            stats.first_receipt = now
        check = self._guards[camera].check(stamp)
        if check.verdict is StampVerdict.REJECT:
            return self._reject(stats, check.reason)
        new_timeline = check.reason if check.verdict is StampVerdict.NEW_TIMELINE else ""
        if new_timeline:
            stats.gaps.restart()
        stats.gaps.add(stamp)
        updates: List[MonitorUpdate] = []
        if new_timeline:
            updates += self._restart_on_new_timeline(camera, stamp, new_timeline, now)
        try:
            rgb = decode()
            problem = self._frame_problem(*rgb.shape[:2]) if self._frame_problem else ""
            if problem:
                raise FrameRejected(problem)
            started = self.pipeline.add_frame(camera, Frame(stamp, rgb))
        except (ImageDecodeError, FrameRejected) as exc:
            return self._reject(stats, str(exc), new_timeline, updates)
        if started is not None:
            updates.append(started)
        if self._latest_stamp is None or stamp >= self._latest_stamp:
            self._latest_stamp, self._latest_receipt = stamp, now
        stats.accepted += 1
        stats.last_accepted = now
        stats.refused_since_accepted = 0
        stats.stale_reported = False
        stats.frame_id = frame_id
        return IntakeResult(True, new_timeline=new_timeline, updates=updates)

    def expect_gap(self) -> None:
        """Let each camera's next frame be any time ahead: a caller started an episode (stamp_guard.py)."""
        for guard in self._guards.values():
            guard.expect_gap()

    def _restart_on_new_timeline(self, camera: str, stamp: float, reason: str,
                                 now: float) -> List[MonitorUpdate]:
        """Time limits, stalls and windows would otherwise compare stamps of two clocks."""
        self._latest_stamp, self._latest_receipt = stamp, now
        if self.pipeline.task is None:
            return []
        return self.pipeline.start_episode(stamp, None, f"camera {camera}: {reason}")

    @staticmethod
    def _reject(stats: CameraStats, reason: str, new_timeline: str = "",
                updates: Sequence[MonitorUpdate] = ()) -> IntakeResult:
        stats.refuse(reason)
        return IntakeResult(False, rejected_because=reason, new_timeline=new_timeline,
                            updates=updates)

    # --- time -------------------------------------------------------------------------------
    def frame_time(self) -> Optional[float]:
        """Now, in frame-stamp time: the newest frame's stamp plus the clock time since it came.

        That way time limits run on while a camera is silent. None before the first frame: the
        camera's clock is unknown until then (it may be sim time, a bag's, or a device's).
        """
        if self._latest_stamp is None:
            return None
        return self._latest_stamp + (self.clock() - self._latest_receipt)

    def tick(self) -> List[MonitorUpdate]:
        """Time limits, then cameras with no usable frame for longer than the monitor's stale limit.

        Silent cameras and cameras whose every frame is refused alike, once per such period.

        Call it periodically live, and before each frame offline.
        """
        now_frame = self.frame_time()
        if now_frame is None:
            return []
        updates = [self.pipeline.tick(now_frame)]
        now = self.clock()
        stale_after = self.pipeline.monitor.config.camera_stale_after_s
        for stats in self.stats.values():
            age = stats.usable_age(now)
            if age is not None and age > stale_after and not stats.stale_reported:
                stats.stale_reported = True
                updates.append(self.pipeline.report_camera_stale(stats.name, now_frame, age,
                                                                 stats.unusable_reason()))
        return [u for u in updates if u.events]
