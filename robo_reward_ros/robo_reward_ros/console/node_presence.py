# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Whether the reward node is in the ROS graph now: running, gone, or not seen yet.

An idle node publishes nothing for minutes, so silence on its topics proves nothing; the graph
does. A node stopped cleanly leaves it at once, a killed one when DDS's lease runs out (seconds).
"""
from __future__ import annotations

import time
from typing import Optional, Tuple

WAITING, RUNNING, GONE = "waiting", "running", "gone"


class NodePresence:
    """Tracks one node (``name`` in ``namespace``) through the graph of the console's own node."""

    def __init__(self, node, name: str, namespace: str = "", check_every_sec: float = 0.5) -> None:
        self._node = node
        self._wanted = (name, "/" + namespace.strip("/"))
        self._check_every = check_every_sec
        self._checked_at = -float("inf")
        self.status = WAITING
        self.since = time.time()

    @property
    def path(self) -> str:
        name, namespace = self._wanted
        return f"{namespace.rstrip('/')}/{name}"

    def update(self, now: Optional[float] = None) -> Tuple[str, float]:
        """Return (status, wall time it began); asks the graph at most every ``check_every_sec``."""
        now = time.monotonic() if now is None else now
        if now - self._checked_at >= self._check_every:
            self._checked_at = now
            try:
                present = self._wanted in self._node.get_node_names_and_namespaces()
            except Exception:  # the context is shutting down: the console is closing
                present = False
            status = RUNNING if present else (GONE if self.status != WAITING else WAITING)
            if status != self.status:
                self.status, self.since = status, time.time()
        return self.status, self.since
