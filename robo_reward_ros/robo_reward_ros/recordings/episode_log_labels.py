# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Training labels from the reward node's episode logs: what the operator's corrections say.

The node logs each episode (``episode_<id>.jsonl``: header, events, summary) and every operator
input as an ``OperatorLabel`` record, maybe in a later episode's log, so labels are gathered by
``episode_id`` across all the files. Each episode becomes one ``LoggedEpisode``: its time span
and stages in frame stamps (the camera's header stamps, so a recording of the same session can be
cut by them) and, per stage, what the operator said:

- success at ``t``: an applied SUCCESS verdict (``t`` its stamp, at most the stage's end); a model
  success the operator confirmed (its pending decision confirmed, or the ended episode confirmed
  by a late SUCCESS; ``t`` when the model decided); with ``trust_model_successes``, a model success
  no operator contradicted. A late SUCCESS on a stage the model never passed: ``t`` its end;
- a veto (NOT_YET, applied or late) at ``t``: not yet successful up to ``t``; a late one also takes
  back the stage's success (the model's false positive);
- a FAILURE verdict (applied or late): the episode failed (and the stage's success is taken back);
- takeovers: from each applied INTERVENTION_START to its INTERVENTION_END (or the episode's end).

Refused labels say nothing. An episode without any of these is skipped, with the reason. The
rules match the agreement table's (evaluation/operator_agreement.py): a verdict answered a pending
success when the model's view it carries says one was pending.
"""
from __future__ import annotations

import dataclasses
import glob
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from robo_reward_ros.core.episode_log import read_episode_log
from robo_reward_ros.core.events import DecidedBy
from robo_reward_ros.core.operator_labels import LabelKind, Verdict

EPS = 1e-6  # stamps are floats of nanosecond header stamps: equal within a microsecond


@dataclasses.dataclass(frozen=True)
class LogLabelling:
    """How ``finetune --episode-logs`` takes the logs (the CLI's flags)."""

    directories: Tuple[str, ...]
    trust_model_successes: bool = False
    keep_intervention_frames: bool = False


@dataclasses.dataclass
class LoggedStage:
    instruction: str
    start: float  # its frames are stamped after this (stage 1: at or after the episode's start)
    end: float
    success_at: Optional[float] = None
    success_by: str = ""  # "operator", "confirmed model", "model" (trusted)
    not_yet_until: Optional[float] = None  # the latest veto's stamp


@dataclasses.dataclass
class LoggedEpisode:
    episode_id: str
    log: str
    start: float
    end: float
    stages: List[LoggedStage]  # the stages it reached
    num_stages: int = 1  # the task's
    outcome: str = ""  # success | failure | not_yet | "" (stage labels only, or skipped)
    interventions: List[Tuple[float, float]] = dataclasses.field(default_factory=list)
    skipped: str = ""  # why nothing in the logs is usable ("" when something is)
    notes: List[str] = dataclasses.field(default_factory=list)

    @property
    def success_sec(self) -> Optional[float]:
        """Return when the episode succeeded, in seconds from its start (None unless a success)."""
        last = self.stages[-1].success_at
        return None if self.outcome != "success" or last is None else last - self.start

    def stage_at(self, stamp: float) -> int:
        """Return the index of the stage a frame stamped ``stamp`` belongs to."""
        index = 0
        for number, stage in enumerate(self.stages[1:], start=1):
            if stamp > stage.start + EPS:
                index = number
        return index


def find_episode_logs(paths: Sequence[str]) -> List[str]:
    """Return the episode logs (``episode_*.jsonl``) in ``paths`` (folders, or log files)."""
    found: List[str] = []
    for path in paths:
        path = os.path.expanduser(path)
        if os.path.isfile(path):
            found.append(path)
        elif os.path.isdir(path):
            found += sorted(glob.glob(os.path.join(path, "episode_*.jsonl")))
        else:
            raise FileNotFoundError(f"{path}: no such folder of episode logs")
    if not found:
        raise FileNotFoundError("no episode logs (episode_*.jsonl) in " + ", ".join(paths))
    return found


def read_logged_episodes(paths: Sequence[str], trust_model_successes: bool = False) -> List[LoggedEpisode]:
    """Read every episode of the logs in ``paths`` with its labels, in order of start; ValueError for a corrupt log."""
    own: Dict[str, Tuple[str, List[Dict[str, Any]]]] = {}
    elsewhere: Dict[str, List[Dict[str, Any]]] = {}
    duplicates: Dict[str, int] = {}
    for path in find_episode_logs(paths):
        records = [r for r in read_episode_log(path) if r.get("type") != "estimate"]
        header = next((r for r in records if r.get("type") == "header"), None)
        mine = header["episode_id"] if header is not None else None
        if mine is not None:
            if mine in own:
                duplicates[mine] = duplicates.get(mine, 1) + 1
            own[mine] = (path, records)
        for record in records:
            if record.get("type") == "OperatorLabel" and record.get("episode_id") != mine:
                elsewhere.setdefault(record.get("episode_id"), []).append(record)
    episodes = []
    for episode_id, (path, records) in own.items():
        later = sorted(elsewhere.get(episode_id, []), key=lambda r: float(r.get("stamp", 0.0)))
        episode = _episode(episode_id, path, records + later, trust_model_successes)
        if episode_id in duplicates:
            episode.skipped = (f"{duplicates[episode_id]} episodes were logged under this id: "
                               "its labels cannot be told apart")
        episodes.append(episode)
    return sorted(episodes, key=lambda e: (e.start, e.episode_id))


def _episode(episode_id: str, path: str, records: List[Dict[str, Any]], trust: bool) -> LoggedEpisode:
    header = next(r for r in records if r.get("type") == "header")
    start = float(header["start_stamp"])
    summary = next((r for r in records if r.get("type") == "summary"
                    and r.get("episode_id") == episode_id), None)
    notes = []
    if summary is not None:
        end = float(summary["end_stamp"])
    else:
        stamps = [float(r["stamp"]) for r in records
                  if r.get("episode_id") == episode_id and isinstance(r.get("stamp"), (int, float))]
        end = max([start] + stamps)
        notes.append("no summary: the episode ends at its last record")
    advances = {int(r["stage_index"]): float(r["stamp"]) for r in records
                if r.get("type") == "StageAdvanced" and r.get("episode_id") == episode_id}
    stages: List[LoggedStage] = []
    for index, spec in enumerate(header.get("stages") or []):
        if index and index not in advances:
            break  # never reached
        stages.append(LoggedStage(str(spec["instruction"]), advances.get(index, start), end))
    for stage, after in zip(stages, stages[1:]):
        stage.end = after.start
    episode = LoggedEpisode(episode_id, path, start, end, stages, len(header.get("stages") or []),
                            notes=notes)
    _Judge(episode, trust).run(records)
    return episode


class _Judge:
    """Replays one episode's events and labels, in order, into its per-stage labels and outcome."""

    def __init__(self, episode: LoggedEpisode, trust: bool) -> None:
        self.episode = episode
        self.trust = trust
        self.pending: Dict[int, float] = {}  # stage -> the model's pending success (confirmation mode)
        self.model: Dict[int, float] = {}  # stage -> the model's applied success, not confirmed (yet)
        self.failed = False
        self.takeover: Optional[float] = None

    def stage(self, record: Dict[str, Any]) -> Optional[LoggedStage]:
        index = int(record.get("stage_index") or 0)
        return self.episode.stages[index] if 0 <= index < len(self.episode.stages) else None

    def run(self, records: List[Dict[str, Any]]) -> None:
        for record in records:
            if record.get("episode_id") != self.episode.episode_id:
                continue
            kind = record.get("type")
            index = int(record.get("stage_index") or 0)
            if kind == "DecisionPending":
                if record.get("success"):
                    self.pending[index] = float(record["stamp"])
                else:
                    self.pending.pop(index, None)
            elif kind == "StageSucceeded" and record.get("decided_by") == DecidedBy.MODEL:
                # After a wait nobody answered, the model's success is the pending one.
                self.model[index] = self.pending.pop(index, float(record["stamp"]))
            elif kind == "OperatorLabel" and (record.get("applied") or record.get("late")):
                self.label(record, index)
        self.finish()

    def label(self, record: Dict[str, Any], index: int) -> None:
        stamp, late = float(record["stamp"]), bool(record.get("late"))
        stage = self.stage(record)
        kind = record.get("kind")
        if kind == LabelKind.INTERVENTION_START and record.get("applied"):
            self.takeover = stamp
        elif kind == LabelKind.INTERVENTION_END and record.get("applied") and self.takeover is not None:
            self.episode.interventions.append((self.takeover, stamp))
            self.takeover = None
        if kind != LabelKind.VERDICT or stage is None:
            return
        verdict = record.get("verdict")
        if verdict == Verdict.SUCCESS:
            if late:  # the operator confirms how the episode ended
                for number, when in sorted(self.model.items()):
                    self._succeed(self.episode.stages[number], when, "confirmed model")
                self.model.clear()
                if stage.success_at is None:
                    self._succeed(stage, stage.end, "operator")
            elif str(record.get("model_decision") or "").startswith("success pending") and index in self.pending:
                self._succeed(stage, self.pending.pop(index), "confirmed model")
            else:
                self._succeed(stage, stamp, "operator")
        elif verdict in (Verdict.NOT_YET, Verdict.FAILURE):
            self.pending.pop(index, None)
            self.model.pop(index, None)
            if late or verdict == Verdict.FAILURE:
                stage.success_at, stage.success_by = None, ""
            if verdict == Verdict.NOT_YET:
                stage.not_yet_until = max(stamp, stage.not_yet_until or stamp)
            else:
                self.failed = True

    @staticmethod
    def _succeed(stage: LoggedStage, when: float, how: str) -> None:
        stage.success_at, stage.success_by = min(when, stage.end), how

    def finish(self) -> None:
        episode = self.episode
        if self.takeover is not None:
            episode.interventions.append((self.takeover, episode.end))
        unconfirmed = sorted(self.model.items())
        if self.trust:
            for number, when in unconfirmed:
                if episode.stages[number].success_at is None:
                    self._succeed(episode.stages[number], when, "model")
        last = episode.stages[-1] if episode.stages else None
        if self.failed:
            episode.outcome = "failure"
        elif last is not None and len(episode.stages) == episode.num_stages and last.success_at is not None:
            episode.outcome = "success"
        elif any(s.not_yet_until is not None for s in episode.stages):
            episode.outcome = "not_yet"
        elif any(s.success_at is not None for s in episode.stages):
            episode.outcome = ""
            episode.notes.append("stage successes only: the episode's outcome is not known")
        elif unconfirmed:
            episode.skipped = (f"the model's success at {unconfirmed[-1][1] - episode.start:.2f} s was not "
                               "confirmed by an operator (--trust-model-successes takes it)")
        else:
            episode.skipped = "no operator verdict (applied or late)"
