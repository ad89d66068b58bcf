# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What the demo prints while the node works: a compact live view a person can follow.

Per episode a header (task, truth), then one line per estimate, events and stage changes marked
(``>>`` decisions, ``!!`` failures and faults, ``??`` a decision waiting for the operator, ``op``
what the operator said and what the node did with it), a task state only when it changes and
/diagnostics only when a status changes level. ``verbose`` prints every message as it comes instead. Stages
are counted from 1 in every line (message fields are 0-based and converted here).
"""
from __future__ import annotations

import sys
from typing import Callable, Dict, Optional, Sequence, Tuple

from robo_reward_ros.core.events import DecidedBy, FailureKind, TaskStatus
from robo_reward_ros.core.operator_labels import LabelKind, Verdict
from robo_reward_ros.core.stamps import to_seconds

LEVEL_NAMES = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}


def _name(kind, value: int) -> str:
    """Return the lower-case name of a message constant (the core enums equal them), or the number."""
    try:
        return kind(value).name.lower()
    except ValueError:
        return str(value)


_ANSI = {"good": "\033[1;32m", "bad": "\033[1;31m", "warn": "\033[33m", "head": "\033[1m"}


def _level(status) -> int:
    level = status.level
    return level[0] if isinstance(level, (bytes, bytearray)) else int(level)


class DemoConsole:
    """Turns the node's messages into console lines; ``episodes`` are the recordings the camera plays, in order."""

    def __init__(self, episodes: Sequence, verbose: bool = False,
                 write: Callable[[str], None] = None, color: Optional[bool] = None) -> None:
        self.verbose = verbose
        self._write = write or (lambda text: print(text, flush=True))
        self._color = sys.stdout.isatty() if color is None else color
        self._episodes = {episode.name: (index, episode) for index, episode in enumerate(episodes)}
        self._headed = set()  # episodes whose header was printed
        self._first_frame: Dict[str, float] = {}  # episode id -> stamp of its first frame
        self._state: Optional[Tuple] = None  # the last task state shown
        self._levels: Dict[str, int] = {}  # diagnostic status name -> level last seen
        self._pending: Dict[str, bool] = {}  # episode id -> its last state shown was pending

    # --- one entry per subscription ---------------------------------------------------------
    def state(self, msg) -> None:
        if self.verbose:
            self._say(f"task_state: {self._describe_state(msg)}")
            return
        # stage_succeeded then running in the same stage is one change; repeats are not news.
        status = TaskStatus.RUNNING if msg.status == TaskStatus.STAGE_SUCCEEDED else msg.status
        key = (msg.episode_id, msg.stage_index, msg.stage_count, status)
        if key == self._state:
            return
        self._state = key
        if not msg.episode_id:
            self._say(f"node: {self._describe_state(msg)}")
            return
        # No time on state lines: the estimate that decided carries it (the summary's time).
        self._header(msg.episode_id)
        stage = self._stage(msg.stage_index, msg.stage_count)
        who = _decider(msg)
        if msg.status == TaskStatus.PENDING:
            self._pending[msg.episode_id] = True
        # An operator's decision: the "op" line before it says why; the model's: its rule.
        why = "" if msg.decided_by.source == DecidedBy.OPERATOR else f" ({msg.reason})"
        if msg.status == TaskStatus.STAGE_SUCCEEDED:
            # The model's reason names the stage and its rule ("stage 1 succeeded: ...").
            what = msg.reason if why else f"stage {msg.stage_index} succeeded, decided by {who}"
            self._say(f">> {what}; next {stage}: '{msg.instruction}'", "good")
        elif msg.status == TaskStatus.SUCCEEDED:
            self._say(f">> SUCCEEDED, decided by {who}{why}", "good")
        elif msg.status in (TaskStatus.FAILED, TaskStatus.TIMED_OUT):
            self._say(f">> {_name(TaskStatus, msg.status).upper()} in {stage}, decided by {who}{why}",
                      "bad")
        elif msg.status == TaskStatus.PENDING:
            _, _, wait = msg.reason.partition("; waiting for an operator to confirm or veto, ")
            said = "it succeeded" if msg.pending_success else "the episode failed"
            self._say(f"?? {stage}: the model says {said}; waiting for the operator to confirm or "
                      f"veto ({wait or 'no time limit'})", "warn")
        elif msg.status == TaskStatus.RUNNING and self._pending_before(msg.episode_id):
            self._say(f"   back to work on {stage}")
        elif msg.status == TaskStatus.RUNNING:
            self._say(f"   running {stage} ({msg.reason})")
        else:
            self._say(f"   idle ({msg.reason})")

    def label(self, msg) -> None:
        """Show what an operator said and what the node did with it."""
        kind = _name(LabelKind, msg.kind)
        what = _name(Verdict, msg.verdict) if msg.kind == LabelKind.VERDICT else kind
        if self.verbose:
            self._say(f"operator label: {msg.episode_id} {what} from {msg.source}: {msg.outcome}")
            return
        self._header(msg.episode_id)
        applied = "applied" if msg.applied else "late" if msg.late else "refused"
        self._say(f"op {self._when(msg.episode_id, to_seconds(msg.header.stamp))}operator {msg.source}: "
                  f"{what.upper()}, {msg.reason} -> {applied}: {msg.outcome}", "head")

    def episode_time(self, episode_id: str, stamp: float) -> Optional[float]:
        """Return ``stamp`` (node frame time) as the recording's episode time; None before its first estimate."""
        start = self._first_frame.get(episode_id)
        _, episode = self._episodes.get(episode_id, (None, None))
        if start is None or episode is None:
            return None
        return stamp - start + (episode.frames[0].stamp if episode.frames else 0.0)

    def _pending_before(self, episode_id: str) -> bool:
        was = self._pending.get(episode_id, False)
        self._pending[episode_id] = False
        return was

    def estimate(self, msg) -> None:
        if msg.episode_id not in self._first_frame and msg.frame_stamps:
            # The window keeps its stage's first frame: the episode's first estimate starts at
            # the episode's first frame (the same origin the written traces use).
            self._first_frame[msg.episode_id] = to_seconds(msg.frame_stamps[0])
        success = f"{msg.success_probability:.2f}" if msg.has_success_probability else "n/a"
        if self.verbose:
            self._say(f"reward: {msg.episode_id} stage {msg.stage_index + 1} progress "
                      f"{msg.progress:.3f} success_p {success} reward {msg.reward:+.3f} frames "
                      f"{len(msg.frame_stamps)} latency {msg.inference_latency_sec * 1000:.0f} ms")
            return
        self._header(msg.episode_id)
        filled = int(round(max(0.0, min(1.0, msg.progress)) * 10))
        stages = self._stage_count(msg.episode_id)
        self._say(f"   {self._when(msg.episode_id, to_seconds(msg.header.stamp))}"
                  f"{self._stage(msg.stage_index, stages)}  progress {msg.progress:.3f} "
                  f"[{'#' * filled}{' ' * (10 - filled)}]  success {success}  "
                  f"reward {msg.reward:+.3f}  ({msg.inference_latency_sec * 1000:.0f} ms)"
                  + ("  << stage succeeded" if msg.success else ""))

    def failure(self, msg) -> None:
        kind = _name(FailureKind, msg.kind)
        if self.verbose:
            self._say(f"failure event: {msg.episode_id} {kind} (terminal {msg.terminal}): "
                      f"{msg.description}")
            return
        self._header(msg.episode_id)
        what = kind if msg.task_failure else f"{kind} (a pipeline fault, not the robot's)"
        end = " - ends the episode" if msg.terminal else ""
        self._say(f"!! {self._when(msg.episode_id, to_seconds(msg.header.stamp))}{what}{end}: "
                  f"{msg.description}", "bad" if msg.task_failure else "warn")

    def diagnostics(self, msg) -> None:
        for status in msg.status:
            level = _level(status)
            if self.verbose:
                if "camera" in status.name or "model" in status.name:
                    values = {kv.key: kv.value for kv in status.values}
                    keys = ("frames_received", "frames_dropped", "window_fill",
                            "inference_latency_p50_sec", "inference_latency_p95_sec", "last_error")
                    shown = {k: values[k] for k in keys if values.get(k) not in (None, "", "n/a")}
                    self._say(f"diagnostics: {status.name}: {status.message} {shown}")
                continue
            before = self._levels.get(status.name, 0)
            self._levels[status.name] = level
            if level != before:
                self._say(f"{'!!' if level else '  '} diagnostics {LEVEL_NAMES.get(level, level)}: "
                          f"{status.name}: {status.message}", "warn" if level else "")

    # --- helpers ----------------------------------------------------------------------------
    def _header(self, episode_id: str) -> None:
        if not episode_id or episode_id in self._headed:
            return
        self._headed.add(episode_id)
        index, episode = self._episodes.get(episode_id, (None, None))
        number = f"{index + 1}/{len(self._episodes)}" if index is not None else "?"
        self._say(f"== episode {number}: {episode_id} ==", "head")
        if episode is None:
            return
        stages = episode.instructions
        task = (f"'{stages[0]}'" if len(stages) == 1 else
                "  ".join(f"stage {i + 1}: '{text}'" for i, text in enumerate(stages)))
        self._say(f"   task: {task}")
        self._say(f"   truth: {_truth(episode)}")

    def _when(self, episode_id: str, stamp: float) -> str:
        """Return episode time (the recording's clock, as in the summary and plots); "" before the first estimate."""
        start = self._first_frame.get(episode_id)
        if start is None:
            return ""
        _, episode = self._episodes.get(episode_id, (None, None))
        origin = episode.frames[0].stamp if episode is not None and episode.frames else 0.0
        return f"{stamp - start + origin:5.1f} s  "

    def _stage_count(self, episode_id: str) -> int:
        _, episode = self._episodes.get(episode_id, (None, None))
        return len(episode.instructions) if episode is not None else 0

    @staticmethod
    def _stage(index: int, count: int) -> str:
        return f"stage {index + 1}/{count}" if count else f"stage {index + 1}"

    def _describe_state(self, msg) -> str:
        status = _name(TaskStatus, msg.status)
        if not msg.stage_count:
            return f"{status}, no task yet" + (f" ({msg.reason})" if msg.reason else "")
        return (f"episode {msg.episode_id} {self._stage(msg.stage_index, msg.stage_count)} {status}: "
                f"'{msg.instruction}' ({msg.reason})")

    def _say(self, text: str, style: str = "") -> None:
        if self._color and style:
            text = f"{_ANSI[style]}{text}\033[0m"
        self._write(text)


def _decider(msg) -> str:
    """Return who decided, in words: the operator's name, or the model, a time limit, an abort."""
    source = msg.decided_by.source
    if source == DecidedBy.OPERATOR and msg.decided_by.name:
        return f"the operator ({msg.decided_by.name})"
    return _name(DecidedBy, source).replace("_", " ")


def _truth(episode) -> str:
    """Describe the recording's own outcome in words, with when it happened (episode time)."""
    outcome = episode.outcome or "unknown (no labels)"
    if episode.outcome == "success" and episode.success_stamp() is not None:
        return f"success, reached at {episode.success_stamp():.1f} s"
    if episode.outcome == "failure":
        kind = f" ({episode.failure_kind})" if episode.failure_kind else ""
        onset = episode.failure_stamp
        return f"failure{kind}" + (f", from {onset:.1f} s" if onset is not None else "")
    return outcome


def operator_summary(episode_names: Sequence[str], states: Sequence, labels: Sequence,
                     episode_time: Callable[[str, float], Optional[float]]) -> str:
    """Return one line per episode: the model's decisions, the operator's verdicts, the final outcome, its decider."""
    lines = ["demo: the model's decisions and the final ones (the operator in the loop; episode times in s):"]

    def at(msg) -> str:
        when = episode_time(msg.episode_id, to_seconds(msg.header.stamp))
        return f" at {when:.1f}" if when is not None else ""
    for name in episode_names:
        mine = [m for m in states if m.episode_id == name]
        if not mine:
            continue
        model = [f"stage {m.stage_index + 1} {'success' if m.pending_success else 'failure'}{at(m)}"
                 for m in mine if m.status == TaskStatus.PENDING]
        said = [f"{_name(Verdict, m.verdict)}{at(m)}" + ("" if m.applied else " (late)" if m.late else " (refused)")
                for m in labels if m.episode_id == name and m.kind == LabelKind.VERDICT]
        final = next((m for m in reversed(mine) if TaskStatus(m.status).ended or m.status == TaskStatus.IDLE), None)
        end = (f"{_name(TaskStatus, final.status)}, decided by {_decider(final)}" if final is not None
               else "still running")
        lines.append(f"  {name}: model: {', '.join(dict.fromkeys(model)) or 'no decision'} | "
                     f"operator: {', '.join(said) or 'nothing'} | final: {end}")
    return "\n".join(lines)
