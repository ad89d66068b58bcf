# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Runs a step at a fixed rate on its own thread, so the ROS executor never waits for a model.

Latest wins by construction: each step reads the newest window when it starts; nothing is
queued, so a model slower than the camera lowers the estimate rate to 1 / step time and never
grows a backlog.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional


class PeriodicWorker:
    def __init__(self, rate_hz: float, step: Callable[[], None],
                 on_error: Callable[[BaseException], None], name: str = "reward-inference",
                 align_to_input_sec: float = 0.0) -> None:
        """``align_to_input_sec`` > 0: a step that is on time (not overdue) first waits up to this long for a new frame.

        That is, for the next :meth:`notify`, so it scores a frame that just arrived instead of one
        up to a camera period old. An overdue step (slow model) never waits.
        """
        if not rate_hz > 0.0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        if align_to_input_sec < 0.0:
            raise ValueError(f"align_to_input_sec must be >= 0, got {align_to_input_sec}")
        self.period_sec = 1.0 / rate_hz
        self.align_to_input_sec = align_to_input_sec
        self._input = threading.Event()
        self.waiting_for_input = threading.Event()  # set while a step waits for input
        self._step = step
        self._on_error = on_error
        self._name = name
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.steps = 0
        self.overruns = 0  # steps that took longer than the period

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> bool:
        """Ask the loop to end and wait for the running step; False if it did not end in time."""
        self._stop.set()
        self._input.set()  # a step waiting for input must not hold the stop up
        thread, self._thread = self._thread, None
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def notify(self) -> None:
        """Signal that new input arrived (any thread)."""
        self._input.set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        next_start = time.monotonic()
        overdue = False
        while not self._stop.is_set():
            if self.align_to_input_sec > 0.0 and not overdue:
                self._input.clear()
                self.waiting_for_input.set()
                self._input.wait(self.align_to_input_sec)
                self.waiting_for_input.clear()
                if self._stop.is_set():
                    break
            try:
                self._step()
            except Exception as exc:  # reported, never fatal: the node must keep running
                self._on_error(exc)
            self.steps += 1
            next_start += self.period_sec
            now = time.monotonic()
            overdue = now > next_start
            if overdue:
                self.overruns += 1
                next_start = now  # do not try to catch up with a burst of steps
            self._stop.wait(next_start - now if next_start > now else 0.0)
