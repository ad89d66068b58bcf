# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What an operator can tell the monitor, and the label each input leaves in the episode log.

An operator's verdict, veto, takeover, reset-done or dismissal is the label that would fix the
model, so every one is recorded (durably, as an event) whether it was applied, late or refused,
with what the model thought at that moment. The integer values mirror ``OperatorVerdict.msg`` and
``OperatorLabel.msg``.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Optional

from robo_reward_ros.core.events import MonitorEvent
from robo_reward_ros.core.monitor_update import MonitorUpdate


class Verdict(enum.IntEnum):
    """An operator's judgement of the running stage; ``NOT_YET`` is the veto."""

    SUCCESS = 1
    FAILURE = 2
    NOT_YET = 3


class LabelKind(enum.IntEnum):
    VERDICT = 1
    INTERVENTION_START = 2
    INTERVENTION_END = 3
    RESET_DONE = 4
    DISMISS_ALERT = 5


@dataclasses.dataclass(frozen=True)
class PendingDecision:
    """A model decision held for an operator (confirmation mode) or a verifier: ``success`` or a terminal failure.

    ``verifier``: it waits for the second model's answer (asked in the same inference step), then
    for an operator if confirmation mode is on too. ``model_value`` put it in the verifier's band;
    ``step`` is the step it was decided in (cameras, scored stage, success probability, stamp), for
    the reward step of its outcome.
    """

    success: bool
    stamp: float
    reason: str
    failure_kind: int = 0
    verifier: bool = False
    model_value: float = 0.0
    step: Optional[tuple] = None

    def describe(self) -> str:
        what = "success" if self.success else "failure"
        return f"{what} pending {'a second opinion' if self.verifier else 'confirmation'} ({self.reason})"


@dataclasses.dataclass(frozen=True)
class OperatorLabel(MonitorEvent):
    """One operator input as recorded: ``applied``, ``late`` (for an ended episode) or refused (neither).

    ``model_*``: the model's view when it came (fused progress, last success probability, its own
    decision in words, or "").
    """

    kind: LabelKind
    source: str
    reason: str
    applied: bool
    late: bool
    outcome: str
    verdict: int = 0
    model_progress: Optional[float] = None
    model_success_prob: Optional[float] = None
    model_decision: str = ""
    alert_kind: int = 0  # for a dismissal: the FailureKind of the alert
    alert_stamp: Optional[float] = None


@dataclasses.dataclass(frozen=True)
class OperatorAnswer:
    """What the monitor made of an operator input: ``accepted`` False is a refusal (``message`` says why)."""

    accepted: bool
    message: str
    label: OperatorLabel
    update: MonitorUpdate
    next_episode_id: str = ""


def parse_verdict(value) -> Verdict:
    """Return the verdict for an int or a name (``success``, ``failure``, ``not_yet``/``veto``)."""
    if isinstance(value, str):
        name = value.strip().upper().replace("-", "_").replace(" ", "_")
        if name == "VETO":
            return Verdict.NOT_YET
        try:
            return Verdict[name]
        except KeyError:
            raise ValueError(f"unknown verdict '{value}': use success, failure or not_yet") from None
    try:
        return Verdict(int(value))
    except ValueError:
        raise ValueError(f"unknown verdict {value!r}: use 1 (SUCCESS), 2 (FAILURE) or 3 (NOT_YET)") from None
