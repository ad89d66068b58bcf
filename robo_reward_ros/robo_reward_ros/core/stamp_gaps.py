# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Frames a camera stamped that never arrived, seen from the gaps between the stamps that did.

Transports do not always report loss (shared memory drops frames silently; a sensor_msgs/Image has
no sequence number): the publisher's own stamps still tell. The camera's period is a low
percentile of recent stamp intervals (the common interval survives even heavy loss), and every
interval of n periods means n - 1 frames that did not come. An estimate, for /diagnostics only.
"""
from __future__ import annotations

import collections
from typing import Deque, Optional

import numpy as np

_HISTORY = 200  # stamp intervals kept
_MIN_INTERVALS = 20  # before the period is trusted
_PERIOD_PERCENTILE = 5.0


class StampGapEstimator:
    def __init__(self) -> None:
        self._intervals: Deque[float] = collections.deque(maxlen=_HISTORY)
        self._last: Optional[float] = None
        self._counting = False
        self.missed = 0  # frames estimated lost since the start (or the last restart)

    def restart(self) -> None:
        """Forget the intervals: across a new timeline they mean nothing."""
        self._intervals.clear()
        self._last = None
        self._counting = False

    def add(self, stamp: float) -> None:
        if self._last is not None and stamp > self._last:
            interval = stamp - self._last
            self._intervals.append(interval)
            period = self.period()
            if period is not None:
                # The intervals seen before the period was known count once it is.
                counted = self._intervals if not self._counting else [interval]
                self.missed += sum(max(0, int(round(i / period)) - 1) for i in counted)
                self._counting = True
        if self._last is None or stamp > self._last:
            self._last = stamp

    def period(self) -> Optional[float]:
        """Return the publisher's frame period in stamp seconds, None until enough frames came."""
        if len(self._intervals) < _MIN_INTERVALS:
            return None
        period = float(np.percentile(np.fromiter(self._intervals, float), _PERIOD_PERCENTILE))
        return period if period > 0.0 else None

    def recent_loss(self) -> Optional[float]:
        """Return the fraction of the publisher's recent frames that never arrived (over the kept intervals)."""
        period = self.period()
        if period is None:
            return None
        intervals = np.fromiter(self._intervals, float)
        missing = float(np.maximum(0, np.rint(intervals / period) - 1).sum())
        return missing / (missing + len(intervals))
