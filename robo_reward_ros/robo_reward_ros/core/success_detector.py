# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Stage success: a k-of-n vote per camera, combined across cameras by a rule.

One estimate is one vote, cast by its newest frame only: the frames of one estimate come from one
forward pass, so their errors are correlated and must not count as independent votes. With
``k >= 2`` no single noisy estimate can flip the decision.
"""
from __future__ import annotations

import collections
import enum
from typing import Deque, Dict, Optional, Sequence, Tuple


class CameraRule(str, enum.Enum):
    """How per-camera decisions combine; the string values are the ROS parameter values."""

    ANY = "any"
    MAJORITY = "majority"  # strictly more than half of the cameras
    ALL = "all"


class SuccessDetector:
    """Votes of one stage. Build a new one (or call ``reset``) when a stage starts."""

    def __init__(
        self,
        k: int,
        n: int,
        success_threshold: float,
        progress_threshold: float,
        rule: CameraRule,
        cameras: Sequence[str] = (),
    ) -> None:
        if not 1 <= k <= n:
            raise ValueError(f"success vote needs 1 <= k <= n, got k={k}, n={n}")
        self._k = k
        self._n = n
        self._success_threshold = success_threshold
        self._progress_threshold = progress_threshold
        self._rule = CameraRule(rule)
        # Fixed cameras make "all"/"majority" wait for cameras that have not reported yet.
        self._fixed_cameras = tuple(cameras)
        self._votes: Dict[str, Deque[bool]] = {}

    def reset(self) -> None:
        self._votes.clear()

    def forget_camera(self, camera: str) -> None:
        """Drop a camera's votes, e.g. after a gap: votes across a gap are not consecutive."""
        self._votes.pop(camera, None)

    def vote(self, camera: str, success_prob: Optional[float], progress: float) -> float:
        """Record one estimate's vote; returns the score it was judged on.

        The score is the success probability against ``success_threshold``, or the progress
        against ``progress_threshold`` for a backend without a success head.
        """
        if success_prob is not None:
            score, threshold = success_prob, self._success_threshold
        else:
            score, threshold = progress, self._progress_threshold
        votes = self._votes.setdefault(camera, collections.deque(maxlen=self._n))
        votes.append(score >= threshold)
        return score

    @property
    def positive_votes(self) -> int:
        """Success votes held now, all cameras together: what a veto takes back."""
        return sum(sum(votes) for votes in self._votes.values())

    def camera_succeeded(self, camera: str) -> bool:
        return sum(self._votes.get(camera, ())) >= self._k

    @property
    def cameras(self) -> Tuple[str, ...]:
        """The cameras the rule is applied over."""
        return self._fixed_cameras or tuple(sorted(self._votes))

    @property
    def succeeded_cameras(self) -> Tuple[str, ...]:
        return tuple(c for c in self.cameras if self.camera_succeeded(c))

    def succeeded(self) -> bool:
        cameras = self.cameras
        if not cameras:
            return False
        count = len(self.succeeded_cameras)
        if self._rule is CameraRule.ANY:
            return count >= 1
        if self._rule is CameraRule.MAJORITY:
            return 2 * count > len(cameras)
        return count == len(cameras)
