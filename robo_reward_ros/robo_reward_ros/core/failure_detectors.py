# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Task-failure detectors over one stage's fused progress signal.

Each detector sees ``(stamp, progress)`` pairs of one stage, in stamp order, and reports a finding
once when its condition becomes true; it re-arms only when the condition clears, so a persisting
condition is one alert, not one per estimate. Time is frame-stamp time (seconds).

``restart_clock`` is called after a camera gap or a model error: the robot's time without any
scored frame says nothing about the robot, so no detector may count it as "held", "stalled" or
"low" time.

"Sustained" values: a level counts as reached only when ``sustain`` consecutive estimates are at or
above it (the minimum over them). A single optimistic estimate therefore can neither raise the
running best (which would fake a regression later) nor clear the low-progress alarm.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Deque, Optional

from robo_reward_ros.core.events import FailureKind


@dataclasses.dataclass(frozen=True)
class Finding:
    kind: FailureKind
    value: float
    threshold: float
    description: str


class _SustainedLevel:
    """Minimum over the last ``sustain`` values, once that many have been seen."""

    def __init__(self, sustain: int) -> None:
        self._recent: Deque[float] = collections.deque(maxlen=sustain)

    def clear(self) -> None:
        self._recent.clear()

    def push(self, value: float) -> Optional[float]:
        self._recent.append(value)
        if len(self._recent) < (self._recent.maxlen or 1):
            return None
        return min(self._recent)


class RegressionDetector:
    """Progress fell more than ``margin`` below the stage's best sustained progress and stayed there for ``hold_s``.

    A dropped object, a spill, an undone step.
    """

    def __init__(self, margin: float, hold_s: float, sustain: int) -> None:
        self._margin = margin
        self._hold_s = hold_s
        self._level = _SustainedLevel(sustain)
        self._best: Optional[float] = None
        self._below_since: Optional[float] = None
        self._fired = False

    @property
    def best(self) -> Optional[float]:
        return self._best

    def restart_clock(self, stamp: float) -> None:
        self._level.clear()
        self._below_since = None

    def update(self, stamp: float, progress: float) -> Optional[Finding]:
        level = self._level.push(progress)
        if level is not None and (self._best is None or level > self._best):
            self._best = level
        if self._best is None or progress >= self._best - self._margin:
            self._below_since = None
            self._fired = False
            return None
        if self._below_since is None:
            self._below_since = stamp
        held = stamp - self._below_since
        if self._fired or held < self._hold_s:
            return None
        self._fired = True
        return Finding(
            kind=FailureKind.REGRESSION,
            value=progress,
            threshold=self._best - self._margin,
            description=(
                f"progress fell from its best {self._best:.2f} to {progress:.2f} and stayed more "
                f"than {self._margin:.2f} below it for {held:.1f} s; check whether the object "
                f"was dropped or a completed step was undone"
            ),
        )


class StallDetector:
    """No sustained improvement of more than ``min_delta`` over the stage's reference for ``window_s``.

    The robot moves but gets nowhere. The reference is a sustained level, like the regression
    detector's best: one optimistic estimate must not become the level the robot is "stuck near".
    """

    def __init__(self, min_delta: float, window_s: float, sustain: int = 1) -> None:
        self._min_delta = min_delta
        self._window_s = window_s
        self._level = _SustainedLevel(sustain)
        self._reference: Optional[float] = None
        self._since: Optional[float] = None
        self._fired = False

    @property
    def stalled(self) -> bool:
        """The stall was reported and no sustained gain has come since."""
        return self._fired

    def restart_clock(self, stamp: float) -> None:
        self._level.clear()
        if self._since is not None:
            self._since = stamp

    def update(self, stamp: float, progress: float) -> Optional[Finding]:
        level = self._level.push(progress)
        if self._since is None:  # the stall clock starts with the stage's first estimate
            self._since = stamp
        if level is None:
            return None
        if self._reference is None:
            self._reference = level
            return None
        if level > self._reference + self._min_delta:
            self._reference, self._since = level, stamp
            self._fired = False
            return None
        stalled = stamp - self._since
        if self._fired or stalled < self._window_s:
            return None
        self._fired = True
        return Finding(
            kind=FailureKind.STALL,
            value=progress,
            threshold=self._reference + self._min_delta,
            description=(
                f"no progress gain above {self._min_delta:.2f} for {stalled:.1f} s (stuck near "
                f"{self._reference:.2f}); the robot may be blocked, missing the grasp or "
                f"repeating a motion"
            ),
        )


class LowProgressDetector:
    """Progress never sustained ``floor`` within ``grace_s`` of the stage start.

    The robot is probably doing the wrong thing (a semantic failure), or the instruction does not match.
    """

    def __init__(self, floor: float, grace_s: float, sustain: int, stage_start: float) -> None:
        self._floor = floor
        self._grace_s = grace_s
        self._stage_start = stage_start
        self._level = _SustainedLevel(sustain)
        self._recent_low: Deque[bool] = collections.deque(maxlen=sustain)
        self._reached = False
        self._fired = False

    def restart_clock(self, stamp: float) -> None:
        # The grace period is robot time and keeps running; only the evidence restarts, so
        # the alarm needs ``sustain`` fresh estimates after a gap.
        self._level.clear()
        self._recent_low.clear()

    def update(self, stamp: float, progress: float) -> Optional[Finding]:
        level = self._level.push(progress)
        if level is not None and level >= self._floor:
            self._reached = True
        self._recent_low.append(progress < self._floor)
        evidence = len(self._recent_low) == self._recent_low.maxlen and all(self._recent_low)
        elapsed = stamp - self._stage_start
        if self._reached or self._fired or elapsed < self._grace_s or not evidence:
            return None
        self._fired = True
        return Finding(
            kind=FailureKind.LOW_PROGRESS,
            value=progress,
            threshold=self._floor,
            description=(
                f"progress is still {progress:.2f}, under the floor {self._floor:.2f}, "
                f"{elapsed:.1f} s into the stage; the robot may be doing the wrong task or the "
                f"instruction may not match the scene"
            ),
        )
