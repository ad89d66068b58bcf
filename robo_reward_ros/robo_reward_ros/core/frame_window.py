# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The frames a reward model sees: those of the current stage of one camera.

Memory is bounded by ``max_frames`` whatever the camera rate or stage length: the newest frame
always sits in the last slot, which becomes a kept frame only once it is ``min_interval_sec``
after the kept one before it, and when the
window is full it drops every other frame (first and newest stay) and doubles its interval,
so it keeps covering the whole stage evenly, as the published models sample it (linspace over
the frames since the stage start). ``max_age_sec`` > 0 turns it into a sliding window of that
many seconds instead.
"""
from __future__ import annotations

import threading
from typing import List, Optional

from robo_reward_ros.core.frame import Frame


class FrameRejected(ValueError):
    """The frame was not added; the message says why (stamps going back, before the stage)."""


class FrameWindow:
    def __init__(self, max_frames: int = 32, min_interval_sec: float = 0.1,
                 max_age_sec: float = 0.0) -> None:
        if max_frames < 2:
            raise ValueError(f"max_frames must be >= 2, got {max_frames}")
        if min_interval_sec < 0.0 or max_age_sec < 0.0:
            raise ValueError("min_interval_sec and max_age_sec must be >= 0")
        self.max_frames = max_frames
        self.base_interval_sec = min_interval_sec
        self.max_age_sec = max_age_sec
        self._lock = threading.Lock()
        self._frames: List[Frame] = []
        self._interval = min_interval_sec
        self._start: Optional[float] = None
        self._include_start = True
        self.generation = 0  # bumped at every restart, so a scorer can tell stages apart

    def restart(self, start_stamp: Optional[float] = None, include_start: bool = True) -> None:
        """Start a new stage or episode: forget every frame and refuse frames stamped before the start.

        A stage that follows a finished one excludes the start stamp too: that frame showed the
        finished stage's success (the task monitor's window rule).
        """
        with self._lock:
            self._frames = []
            self._interval = self.base_interval_sec
            self._start = start_stamp
            self._include_start = include_start
            self.generation += 1

    def add(self, frame: Frame) -> None:
        with self._lock:
            if self._start is not None and (frame.stamp < self._start or (
                    frame.stamp == self._start and not self._include_start)):
                raise FrameRejected(
                    f"frame stamped {frame.stamp:.3f} s belongs to the previous stage (this one "
                    f"starts {'at' if self._include_start else 'after'} {self._start:.3f} s)")
            if self._frames and frame.stamp < self._frames[-1].stamp:
                raise FrameRejected(
                    f"frame stamp went back from {self._frames[-1].stamp:.3f} s to {frame.stamp:.3f} s")
            frames = self._frames
            if frames and frame.stamp == frames[-1].stamp:
                frames[-1] = frame  # the same frame again (a driver resending it): no new slot
            elif len(frames) >= 2 and frames[-1].stamp - frames[-2].stamp < self._interval:
                frames[-1] = frame  # the newest slot is still too close to the last kept one
            else:
                frames.append(frame)
            if self.max_age_sec > 0.0:
                while len(frames) > 2 and frame.stamp - frames[0].stamp > self.max_age_sec:
                    frames.pop(0)
            if len(frames) > self.max_frames:
                self._thin()

    def _thin(self) -> None:
        frames = self._frames
        self._frames = frames[:-1:2] + [frames[-1]]
        self._interval = max(2.0 * self._interval,
                             (frames[-1].stamp - frames[0].stamp) / max(self.max_frames - 1, 1))

    def discard(self, frames: List[Frame]) -> int:
        """Remove these frames (the very objects a snapshot returned); returns how many were still here."""
        with self._lock:
            kept = [f for f in self._frames if not any(f is bad for bad in frames)]
            removed = len(self._frames) - len(kept)
            self._frames = kept
            return removed

    def snapshot(self) -> List[Frame]:
        """Return the frames now in the window, oldest first (a copy: safe to score on another thread)."""
        with self._lock:
            return list(self._frames)

    @property
    def start_stamp(self) -> Optional[float]:
        return self._start

    def __len__(self) -> int:
        with self._lock:
            return len(self._frames)
