# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The console's screen, drawn from what the client holds now: (style, text) fragments for prompt_toolkit.

A plain function of the messages, so the screen is the same whatever draws it. Stages are counted
from 1, as the node's reasons count them; a decision waiting for the operator gets a banner of its
own with the keys that answer it.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from robo_reward_msgs.msg import FailureEvent, OperatorLabel, OperatorVerdict, RewardStep, TaskState

from robo_reward_ros.client.reward_client import DECIDERS
from robo_reward_ros.console.node_presence import GONE, RUNNING
from robo_reward_ros.console.operator_actions import KEYS, WAITING, ActionRecord

Fragments = List[Tuple[str, str]]
BAR_WIDTH = 40
SHOWN_ALERTS, SHOWN_LABELS, SHOWN_ACTIONS = 3, 5, 5


def _names(message, prefix: str) -> dict:
    return {getattr(message, n): n[len(prefix):].lower() for n in dir(message) if n.startswith(prefix)}


STATUS_NAMES = _names(TaskState, "STATUS_")
ALERT_NAMES = _names(FailureEvent, "KIND_")
SEVERITY_NAMES = _names(FailureEvent, "SEVERITY_")
LABEL_NAMES = _names(OperatorLabel, "KIND_")
VERDICT_NAMES = {OperatorVerdict.SUCCESS: "success", OperatorVerdict.FAILURE: "failure",
                 OperatorVerdict.NOT_YET: "not_yet (veto)"}
STATUS_STYLES = {TaskState.STATUS_RUNNING: "class:good", TaskState.STATUS_SUCCEEDED: "class:good",
                 TaskState.STATUS_STAGE_SUCCEEDED: "class:good", TaskState.STATUS_FAILED: "class:bad",
                 TaskState.STATUS_TIMED_OUT: "class:bad", TaskState.STATUS_PENDING: "class:pending"}
ANSWER_STYLES = {WAITING: "class:waiting", "applied": "class:good", "late": "class:warn",
                 "refused": "class:bad", "error": "class:bad"}


@dataclass
class Snapshot:
    """What the screen shows, taken at one moment."""

    node_path: str
    presence: str  # node_presence's WAITING, RUNNING or GONE
    presence_since: float  # wall time
    source: str
    state: Optional[TaskState] = None
    step: Optional[RewardStep] = None
    alerts: Sequence[FailureEvent] = field(default_factory=list)
    labels: Sequence[OperatorLabel] = field(default_factory=list)
    actions: Sequence[ActionRecord] = field(default_factory=list)


def decided_by(decision) -> str:
    """Return who decided, in words ("model pixel_scripted", "operator alice"); "" for nobody."""
    who = DECIDERS.get(decision.source, str(decision.source))
    return f"{who} {decision.name}".strip() if who else ""


def progress_bar(value: float, width: int = BAR_WIDTH) -> str:
    """Return ``[#####-----]`` for a value in [0, 1] (NaN: an empty bar with ``?``)."""
    if value is None or math.isnan(value):
        return "[" + "?" * width + "]"
    filled = int(round(min(max(value, 0.0), 1.0) * width))
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def render(snapshot: Snapshot) -> Fragments:
    """Return the whole screen as prompt_toolkit formatted text."""
    out: Fragments = []
    _header(out, snapshot)
    _task(out, snapshot.state)
    _step(out, snapshot.step, snapshot.state)
    _alerts(out, snapshot.alerts)
    _labels(out, snapshot.labels)
    _actions(out, snapshot.actions)
    out.append(("class:keys", "\nkeys  " + "  ".join(f"{k} {what}" for k, what in KEYS.items()) + "  q quit\n"))
    return out


def _clock(wall: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(wall))


def _header(out: Fragments, snapshot: Snapshot) -> None:
    out.append(("class:title", "robo_reward operator console"))
    out.append(("", f"   operator {snapshot.source}\n"))
    out.append(("", f"node      {snapshot.node_path}  "))
    if snapshot.presence == RUNNING:
        out.append(("class:good", "running\n"))
    elif snapshot.presence == GONE:
        out.append(("class:banner-bad", f" NODE GONE since {_clock(snapshot.presence_since)} "))
        out.append(("", "  (its last known state below; waiting for it to come back)\n"))
    else:
        out.append(("class:waiting", "waiting for the node to appear...\n"))


def _task(out: Fragments, state: Optional[TaskState]) -> None:
    if state is None:
        out.append(("", "episode   - (no task state received yet)\n"))
        return
    stage = f"{state.stage_index + 1}/{state.stage_count}" if state.stage_count else "-"
    out.append(("", f"episode   {state.episode_id or '-'}\n"))
    out.append(("", f"stage     {stage}  "))
    out.append(("class:instruction", f"{state.instruction or '-'}\n"))
    out.append(("", "status    "))
    out.append((STATUS_STYLES.get(state.status, ""), STATUS_NAMES.get(state.status, str(state.status)).upper()))
    who = decided_by(state.decided_by)
    out.append(("", f"  decided by {who}\n" if who else "\n"))
    out.append(("", f"reason    {state.reason or '-'}\n"))
    if state.status == TaskState.STATUS_PENDING:
        said = "SUCCESS" if state.pending_success else "FAILURE"
        confirm = "s confirm success  f failure" if state.pending_success else "f confirm failure  s success"
        out.append(("class:banner", f" {said} PENDING, decided by {who or 'the model'}: waits for you: "
                                    f"{confirm}  v veto "))
        out.append(("", "\n"))
    out.append(("", "takeover  "))
    out.append(("class:banner-warn", " ACTIVE: a person is in control ") if state.intervention_active
               else ("", "off"))
    out.append(("", "\n"))


def _step(out: Fragments, step, state: Optional[TaskState]) -> None:
    if step is None:
        out.append(("", "progress  - (no reward step yet)\n"))
        return
    older = state is not None and step.episode_id != state.episode_id
    success = (f"{step.success_probability:.2f}" if step.has_success_probability
               and not math.isnan(step.success_probability) else "n/a")
    out.append(("", f"progress  {progress_bar(step.progress)} {step.progress:.2f}   task {step.task_progress:.2f}\n"))
    out.append(("", f"success p {success}   step {step.step_index}   return {step.episode_return:.2f}"
                    + ("   intervened" if step.intervened else "")
                    + (f"   (last step of {step.episode_id})" if older else "") + "\n"))


def _alerts(out: Fragments, alerts: Sequence[FailureEvent]) -> None:
    out.append(("class:section", "\nalerts (newest last)\n"))
    if not alerts:
        out.append(("", "  none\n"))
    for alert in list(alerts)[-SHOWN_ALERTS:]:
        kind = ALERT_NAMES.get(alert.kind, str(alert.kind))
        ends = "terminal" if alert.terminal else SEVERITY_NAMES.get(alert.severity, "")
        out.append(("class:bad" if alert.terminal else "class:warn", f"  {kind} ({ends})"))
        out.append(("", f" stage {alert.stage_index + 1}: {alert.description}\n"))


def _labels(out: Fragments, labels: Sequence[OperatorLabel]) -> None:
    out.append(("class:section", "operator labels (newest last)\n"))
    if not labels:
        out.append(("", "  none\n"))
    for label in list(labels)[-SHOWN_LABELS:]:
        kind = LABEL_NAMES.get(label.kind, str(label.kind))
        if label.kind == OperatorLabel.KIND_VERDICT:
            kind += " " + VERDICT_NAMES.get(label.verdict, str(label.verdict))
        status = "applied" if label.applied else "late" if label.late else "refused"
        out.append(("", f"  {label.source}: {kind} "))
        out.append((ANSWER_STYLES[status], status))
        out.append(("", f": {label.outcome.removeprefix('refused: ')}\n"))


def _actions(out: Fragments, actions: Sequence[ActionRecord]) -> None:
    out.append(("class:section", "your keys (newest last)\n"))
    if not actions:
        out.append(("", "  none yet\n"))
    for record in list(actions)[-SHOWN_ACTIONS:]:
        out.append(("", f"  {_clock(record.sent_at)} [{record.key}] {record.what}: "))
        if record.status == WAITING:
            out.append((ANSWER_STYLES[WAITING], record.answer + "\n"))
        else:
            out.append((ANSWER_STYLES.get(record.status, ""), record.status))
            out.append(("", f": {record.answer}\n"))
