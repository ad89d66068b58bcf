# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Run a long call (a model load) that a shutdown must not wait for.

Loading a checkpoint cannot be interrupted inside torch or safetensors, and a process exits only
after its non-daemon threads end, so the call runs in a daemon thread and the caller waits for it
until it is cancelled; a cancelled call is left to finish (or die with the process) unseen.
"""
from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")


class CallAbandoned(Exception):
    """The wait was cancelled before the call returned."""


def call_abandonable(function: Callable[[], T], cancel: threading.Event, name: str,
                     poll_sec: float = 0.05) -> T:
    """Return ``function()``'s result or raise its exception; raise CallAbandoned once ``cancel`` is set."""
    outcome = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as exc:  # handed to the waiting caller
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    while not done.wait(poll_sec):
        if cancel.is_set():
            raise CallAbandoned(name)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
