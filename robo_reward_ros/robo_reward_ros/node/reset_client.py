# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Asks the robot's controller to reset (std_srvs/Trigger) when an episode ends.

On its own thread, so neither the executor nor the inference thread waits for a controller
that is slow, absent or failing. Every attempt has a timeout; failures are retried with a
growing wait and then reported. They never stop the node: the episode has ended either way and
the reset_request topic already said so.
"""
from __future__ import annotations

import dataclasses
import queue
import threading
from typing import Callable, Optional

from rclpy.node import Node
from std_srvs.srv import Trigger


@dataclasses.dataclass
class ResetStats:
    requested: int = 0
    succeeded: int = 0
    failed: int = 0  # requests that ran out of attempts
    attempts: int = 0
    last_error: str = ""


class ResetRequester:
    def __init__(self, node: Node, service: str, timeout_sec: float, retries: int,
                 report: Callable[[bool, str], None]) -> None:
        """``report(ok, text)`` is called once per request with the outcome."""
        self.service = service
        self._timeout = timeout_sec
        self._retries = retries
        self._report = report
        self._client = node.create_client(Trigger, service)
        self._node = node
        self._queue: "queue.Queue[Optional[str]]" = queue.Queue(maxsize=8)
        self.stats = ResetStats()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reset-requester", daemon=True)
        self._thread.start()

    def request(self, episode_id: str) -> None:
        self.stats.requested += 1
        try:
            self._queue.put_nowait(episode_id)
        except queue.Full:  # the controller is far behind; the oldest requests are moot
            self.stats.failed += 1
            self._report(False, f"reset for episode {episode_id} dropped: {self.service} is "
                                "not keeping up")

    def close(self) -> None:
        self._stop.set()
        self._queue.put(None)
        self._thread.join(timeout=self._timeout * (self._retries + 2) + 5.0)
        self._node.destroy_client(self._client)

    def _run(self) -> None:
        while not self._stop.is_set():
            episode_id = self._queue.get()
            if episode_id is None:
                return
            self._call_with_retries(episode_id)

    def _call_with_retries(self, episode_id: str) -> None:
        error = ""
        for attempt in range(self._retries + 1):
            if self._stop.is_set():
                return
            self.stats.attempts += 1
            error = self._call_once()
            if not error:
                self.stats.succeeded += 1
                self._report(True, f"controller reset for episode {episode_id} via {self.service}")
                return
            self._stop.wait(min(0.2 * 2 ** attempt, 5.0))
        self.stats.failed += 1
        self.stats.last_error = error
        self._report(False, f"reset for episode {episode_id} failed after {self._retries + 1} "
                            f"attempt(s): {error}")

    def _call_once(self) -> str:
        if not self._client.wait_for_service(timeout_sec=self._timeout):
            return f"service {self.service} not available within {self._timeout:.1f} s"
        done = threading.Event()
        future = self._client.call_async(Trigger.Request())
        future.add_done_callback(lambda _: done.set())
        if not done.wait(self._timeout):
            future.cancel()
            return f"no answer from {self.service} within {self._timeout:.1f} s"
        try:
            response = future.result()
        except Exception as exc:  # the middleware's error, reported as text
            return f"call failed: {exc}"
        if response is None:
            return "call returned no response"
        if not response.success:
            return f"controller refused: {response.message or '(no message)'}"
        return ""
