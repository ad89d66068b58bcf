# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Per-camera frame-stamp sanity: a stamp that goes back or leaps ahead must not be taken at face value.

All timing (windows, stalls, timeouts) runs on frame stamps.

A single odd stamp is refused, and so is a zero stamp after the first frame (a driver that
does not stamp its frames; a recording's own timeline may start at 0.0). A run of frames that
agree with each other on a new timeline (a bag that loops, a camera driver that restarted with
another clock) is accepted as a new timeline after ``confirm_frames`` frames, and the caller
restarts the episode on it: mixing two clocks in one episode would corrupt every time-based
decision.

After a caller starts an episode (``expect_gap``), the next frame may be any time ahead, though
never back: a controller that stepped a simulator in lock-step and then paused (to fine-tune its
reward model, or while a person reset the scene) sends one frame and waits for its step, so the
run of frames a new timeline needs would never come.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Optional


class StampVerdict(enum.Enum):
    ACCEPT = "accept"
    REJECT = "reject"
    NEW_TIMELINE = "new_timeline"


@dataclasses.dataclass(frozen=True)
class StampCheck:
    verdict: StampVerdict
    reason: str = ""


class StampGuard:
    def __init__(self, max_jump_sec: float = 5.0, confirm_frames: int = 10) -> None:
        if max_jump_sec <= 0.0 or confirm_frames < 1:
            raise ValueError("max_jump_sec must be > 0 and confirm_frames >= 1")
        self.max_jump_sec = max_jump_sec
        self.confirm_frames = confirm_frames
        self.last: Optional[float] = None
        self._candidate_last: Optional[float] = None
        self._candidate_count = 0
        self._gap_expected = False

    def expect_gap(self) -> None:
        """Accept the next frame however far ahead it is (module docstring)."""
        self._gap_expected = True

    def check(self, stamp: float) -> StampCheck:
        # A recording's timeline may start at 0.0; a zero after that is an unstamped frame.
        if stamp < 0.0:
            return StampCheck(StampVerdict.REJECT, f"frame has a negative stamp ({stamp:.3f} s): "
                                                   "the camera driver's clock is wrong")
        if stamp == 0.0 and self.last is not None:
            return StampCheck(StampVerdict.REJECT, "frame has a zero stamp: the camera driver "
                                                   "must stamp its frames (all timing uses them)")
        if self.last is None or self._follows(self.last, stamp) or (self._gap_expected and stamp >= self.last):
            self.last, self._gap_expected = stamp, False
            self._candidate_last, self._candidate_count = None, 0
            return StampCheck(StampVerdict.ACCEPT)
        # A new timeline must move forward: one stale frame sent again and again is no clock.
        if (self._candidate_last is not None and stamp > self._candidate_last
                and self._follows(self._candidate_last, stamp)):
            self._candidate_count += 1
        else:
            self._candidate_count = 1
        self._candidate_last = stamp
        jump = stamp - self.last
        what = (f"stamp went back {-jump:.3f} s" if jump < 0 else
                f"stamp jumped {jump:.1f} s ahead (more than {self.max_jump_sec:g} s)")
        if self._candidate_count >= self.confirm_frames:
            previous, self.last = self.last, stamp
            self._candidate_last, self._candidate_count = None, 0
            return StampCheck(StampVerdict.NEW_TIMELINE,
                              f"camera clock changed: {what} and stayed there for "
                              f"{self.confirm_frames} frames (from {previous:.3f} s to "
                              f"{stamp:.3f} s)")
        return StampCheck(StampVerdict.REJECT, f"{what} from {self.last:.3f} s to {stamp:.3f} s")

    def _follows(self, last: float, stamp: float) -> bool:
        return last <= stamp <= last + self.max_jump_sec
