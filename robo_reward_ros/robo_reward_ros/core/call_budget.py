# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""How many task and episode changes per second the node takes; calls beyond that are refused at once.

Each ``set_task`` or ``start_episode`` ends an episode and starts one: a log record or two made
durable, several messages. Under a flood (two services at 50 calls/s each on a 2-core machine)
the node took them slower than they came, the service queue overflowed, and about half of the
calls were never answered. A token bucket: ``rate`` changes per second on average, ``burst`` at
once; a call over budget gets an immediate "busy" answer, which costs microseconds, so the queue
drains and every call is answered, served or refused, within a bounded time.
"""
from __future__ import annotations

import threading
import time
from typing import Callable


class CallBudget:
    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic,
                 what: str = "task/episode changes") -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self.rate, self.burst, self._clock, self.what = float(rate), int(burst), clock, what
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()
        self.served = 0
        self.refused = 0

    def take(self) -> bool:
        """Spend one change if the budget has one; count the call either way."""
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
            self._last = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                self.served += 1
                return True
            self.refused += 1
            return False

    def busy_reason(self) -> str:
        return (f"busy: more than {self.rate:g} {self.what} per second (bursts of "
                f"{self.burst}); this call changed nothing, retry later")
