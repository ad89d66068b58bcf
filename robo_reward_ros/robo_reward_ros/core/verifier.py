# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A second reward model, asked only about the decisions the first one is unsure of.

OpenRAL sends scores in an uncertain band to a second VLM for a yes/no check. Here any backend
can be that check; its reading of a window is the one number it has that means "done":
TOPReward's P("True") (its yes/no answer), else a success head's probability, else its progress
(RoboReward's expected score mapped to [0, 1]). It is asked fresh each time (its per-stage state
reset first): it judges the windows it is shown, not a stream it follows.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Optional, Sequence

from robo_reward_ros.core.frame import Frame


@dataclasses.dataclass(frozen=True)
class VerifierReading:
    """The verifier's value over the step's windows (their mean), or why it has none."""

    value: Optional[float]
    latency_s: float
    backend: str
    error: str = ""


def done_value(output) -> float:
    """Return the number of a model output that means "the task is done", in [0, 1]."""
    if "p_true" in output.extras:
        value = float(output.extras["p_true"])
    elif output.success is not None:
        value = float(output.success[-1])
    else:
        value = float(output.progress[-1])
    return min(1.0, max(0.0, value))


class Verifier:
    """Wraps a loaded ``RewardModel``; ``ask`` never raises (a failure is a reading with an error)."""

    def __init__(self, model) -> None:
        self.model = model

    @property
    def backend(self) -> str:
        return self.model.name

    def ask(self, instruction: str, windows: Sequence[Sequence[Frame]]) -> VerifierReading:
        started = time.perf_counter()
        try:
            values = []
            for frames in windows:  # each backend picks its own frames of the window
                self.model.reset()
                values.append(done_value(self.model.score(instruction, frames)))
            if not values:
                raise ValueError("no window to judge")
            value: Optional[float] = sum(values) / len(values)
            error = ""
        except Exception as exc:  # out of memory, a bad frame: the first model's decision stands
            value, error = None, f"{type(exc).__name__}: {exc}"
        return VerifierReading(value, time.perf_counter() - started, self.backend, error)

    def close(self) -> None:
        self.model.close()
