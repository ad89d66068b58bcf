# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The console's keys as calls to the reward node, answered on a worker thread.

A service call can take seconds (or never answer: the node is gone), and a console that freezes
while the robot moves is worse than none; so every call goes to one worker, in key order, and
the screen shows "sent, waiting..." until the node's answer (or the timeout) replaces it.
"""
from __future__ import annotations

import collections
import concurrent.futures
import threading
import time
from dataclasses import dataclass
from typing import Callable, Deque, Dict, List, Optional, Tuple

from robo_reward_ros.client import RewardNodeError

# key -> what it does, in the order the key line shows them.
KEYS: Dict[str, str] = {"s": "success", "f": "failure", "v": "veto", "t": "takeover",
                        "r": "reset done", "d": "dismiss alert"}
WAITING, APPLIED, LATE, REFUSED, ERROR = "waiting", "applied", "late", "refused", "error"


@dataclass
class ActionRecord:
    """One key press and, once it came, the node's answer."""

    key: str
    what: str
    sent_at: float  # wall time
    status: str = WAITING
    answer: str = "sent, waiting..."


class OperatorActions:
    """Sends an operator's inputs as ``source``; ``on_change`` is called (on the worker) after each answer."""

    def __init__(self, client, source: str, timeout_sec: float = 5.0,
                 on_change: Callable[[], None] = lambda: None, keep: int = 50) -> None:
        self._client = client
        self.source = source
        self._timeout = timeout_sec
        self.on_change = on_change
        self._lock = threading.Lock()
        self._records: Deque[ActionRecord] = collections.deque(maxlen=keep)
        self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                             thread_name_prefix="console-call")

    def records(self) -> List[ActionRecord]:
        with self._lock:
            return list(self._records)

    def press(self, key: str) -> Optional[ActionRecord]:
        """Send the input of ``key`` (one of KEYS) without waiting; None for another key."""
        if key not in KEYS:
            return None
        what, call = self._call_for(key)
        record = ActionRecord(key, what, time.time())
        with self._lock:
            self._records.append(record)
        self._worker.submit(self._answer, record, call)
        return record

    def _call_for(self, key: str) -> Tuple[str, Callable[[], Tuple[str, str]]]:
        client, source, timeout = self._client, self.source, self._timeout
        if key in "sfv":
            verdict = {"s": "success", "f": "failure", "v": "not_yet"}[key]
            return KEYS[key], lambda: _label_answer(client.submit_verdict(verdict, source,
                                                                          timeout_sec=timeout))
        if key == "t":
            # The state the operator sees decides the toggle; a stale one is refused by the node.
            state = client.task_state()
            start = not (state is not None and state.intervention_active)
            return ("takeover start" if start else "takeover end"), lambda: _label_answer(
                client.set_intervention(start, source, timeout_sec=timeout))
        if key == "r":
            def reset_done():
                episode = client.report_reset_done(source, timeout_sec=timeout)
                return APPLIED, (f"scene reset: episode {episode} started" if episode else
                                 "scene reset recorded (the node started no episode)")
            return KEYS[key], reset_done
        return KEYS[key], lambda: _label_answer(client.dismiss_alert(source, timeout_sec=timeout))

    def _answer(self, record: ActionRecord, call: Callable[[], Tuple[str, str]]) -> None:
        try:
            status, answer = call()
        except RewardNodeError as exc:
            # The client says "<service> refused: <the node's reason>" for a refusal; anything
            # else (no node, no answer in time) is an error of the link, not the node's no.
            text = str(exc)
            status, answer = (REFUSED, text.split(" refused: ", 1)[1]) if " refused: " in text else (ERROR, text)
            answer = answer.removeprefix("refused: ")
        except Exception as exc:  # the console is closing under the call, or a bug: shown, not raised
            status, answer = ERROR, f"{type(exc).__name__}: {exc}"
        with self._lock:
            record.status, record.answer = status, answer
        self.on_change()

    def close(self) -> None:
        """Stop taking calls; a call under way is left to its timeout (the worker does not block the exit past it)."""
        self._worker.shutdown(wait=False, cancel_futures=True)


def _label_answer(label) -> Tuple[str, str]:
    return (APPLIED if label.applied else LATE if label.late else REFUSED), label.outcome.removeprefix("refused: ")
