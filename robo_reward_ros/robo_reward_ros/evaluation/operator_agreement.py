# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""How often the reward model's success decisions agree with the operator, from the episode logs.

Real-robot RL reports a reward model's true and false positives against a person (Robometer's
online runs, HIL-SERL); the node's episode logs (``episode_<id>.jsonl``) hold both sides. Per
stage of each episode:

- a *model success decision* is a ``DecisionPending`` with ``success`` true (confirmation mode) or
  a ``StageSucceeded`` decided by MODEL. A pending success the model applied because nobody
  answered is the same decision, not a second one;
- true positive (TP): the operator confirmed it (the ``StageSucceeded`` decided by OPERATOR with
  "confirmed" in its reason, or a SUCCESS verdict label, applied or late, on that stage after it)
  and nobody vetoed it;
- false positive (FP): it was vetoed: an applied NOT_YET answering it, a late NOT_YET on that
  episode and stage, a FAILURE verdict overriding it while it was pending, or a late FAILURE
  verdict on an episode that ended with its success. A veto wins over a confirmation;
- false negative (FN): the operator declared success (an applied SUCCESS verdict) on a stage where
  the model made no success decision;
- true negative (TN): the operator ended the episode with failure (an applied FAILURE verdict) on a
  stage where the model made no success decision;
- unlabelled: a model decision with neither confirmation nor veto. Counted, never guessed; so
  are late SUCCESS/FAILURE labels on a stage without a model decision (``unscored_late_labels``).

A late label names the stage the episode ended in; which pending decision an applied verdict
answered comes from the label's ``model_decision`` ("success pending ..."), since a pending
decision dropped on timeout leaves no record. Precision TP/(TP+FP), recall TP/(TP+FN), F1
their harmonic mean: None where a denominator is 0. Also: vetoes (applied and late NOT_YET
labels; one that took back success votes before any decision counts too) per hour of episode
time (the summary's ``duration_s``, or the last record's stamp minus the header's
``start_stamp`` when the summary is missing), false alarms (dismissed alerts of the non-terminal
task-failure alerts), takeovers per episode and the share of episode time under one, refused
inputs, labels by source. Labels are gathered by ``episode_id`` across all the files (a late label
may sit in a later episode's log). A torn last line is skipped; a log without a summary counts,
with a note; a log that cannot be read is skipped, with a note.
"""
from __future__ import annotations

import dataclasses
import glob
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from robo_reward_ros.core.episode_log import read_episode_log
from robo_reward_ros.core.events import FailureKind
from robo_reward_ros.core.operator_labels import LabelKind, Verdict

RESULTS = ("tp", "fp", "fn", "tn", "unlabelled")


@dataclasses.dataclass
class Decision:
    """One model success decision and what the operator made of it."""

    stage: int  # counted from 1, as an operator names it
    stamp: float
    how: str  # "pending" (confirmation mode) or "applied"
    confirmed_by: str = ""
    vetoed: str = ""  # how, e.g. "late not_yet by carol"
    open: bool = False  # pending, no answer yet

    @property
    def result(self) -> str:
        return "fp" if self.vetoed else "tp" if self.confirmed_by else "unlabelled"


@dataclasses.dataclass
class _Log:
    path: str
    episode_id: str
    start_stamp: float
    records: List[Dict[str, Any]]


def find_logs(folders: Sequence[str]) -> Tuple[List[str], List[str]]:
    """Return (the episode logs in ``folders``, notes); a folder may also be one log file."""
    paths, notes = [], []
    for folder in folders:
        folder = os.path.expanduser(folder)
        if os.path.isfile(folder):
            paths.append(folder)
            continue
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"{folder}: no such folder of episode logs")
        found = sorted(glob.glob(os.path.join(folder, "episode_*.jsonl")))
        if not found:
            notes.append(f"{folder}: no episode logs (episode_*.jsonl)")
        paths += found
    if not paths:
        raise FileNotFoundError("no episode logs (episode_*.jsonl) in " + ", ".join(folders))
    return paths, notes


def _read(path: str, notes: List[str]) -> Optional[_Log]:
    try:
        records = read_episode_log(path)
    except (OSError, ValueError) as exc:
        notes.append(f"{os.path.basename(path)} skipped: {exc}")
        return None
    header = next((r for r in records if r.get("type") == "header"), None)
    started = next((r for r in records if r.get("type") == "EpisodeStarted"), None)
    first = header or started
    if first is None:
        notes.append(f"{os.path.basename(path)} skipped: no header and no EpisodeStarted record")
        return None
    start = first.get("start_stamp", first.get("stamp", 0.0)) if header else first["stamp"]
    return _Log(path, first["episode_id"], float(start or 0.0), records)


def _rates(counts: Dict[str, int]) -> Dict[str, Optional[float]]:
    """Return precision, recall, F1 and agreement, each None where its denominator is 0."""
    tp, fp, fn, tn = (counts[k] for k in ("tp", "fp", "fn", "tn"))
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = None
    if precision is not None and recall is not None:
        f1 = 2 * tp / (2 * tp + fp + fn)  # the harmonic mean of the two, 0 when tp is 0
    judged = tp + fp + fn + tn
    return {"precision": precision, "recall": recall, "f1": f1,
            "agreement": (tp + tn) / judged if judged else None}


def _per_hour(count: int, seconds: float) -> Optional[float]:
    return count / (seconds / 3600.0) if seconds > 0 else None


def _is_task_alert(record: Dict[str, Any]) -> bool:
    kind = record.get("kind")
    return (not record.get("terminal") and kind in FailureKind._value2member_map_
            and FailureKind(kind).is_task_failure)


def _kind_name(kind: Any) -> str:
    return FailureKind(kind).name.lower() if kind in FailureKind._value2member_map_ else f"kind {kind}"


def _answers_pending(label: Dict[str, Any]) -> bool:
    """Return whether an applied verdict answered the model's pending success (its view when it came)."""
    return str(label.get("model_decision") or "").startswith("success pending")


class _Episode:
    """One episode's log and the labels naming it, replayed in order into decisions and counts."""

    def __init__(self, log: _Log) -> None:
        self.log = log
        self.labels: List[Dict[str, Any]] = []  # labels of this episode in other episodes' logs
        self.decisions: List[Decision] = []
        self.operator_success: set = set()
        self.operator_failure: set = set()
        self.unscored_late = 0
        self.notes: List[str] = []
        self.ended: Optional[Dict[str, Any]] = None

    def own_records(self) -> List[Dict[str, Any]]:
        mine = self.log.episode_id
        return [r for r in self.log.records
                if r.get("type") != "OperatorLabel" or r.get("episode_id") == mine]

    def labels_of(self) -> List[Dict[str, Any]]:
        return [r for r in self.own_records() if r.get("type") == "OperatorLabel"] + self.labels

    # ---- decisions ---------------------------------------------------------------------

    def _open(self) -> Optional[Decision]:
        return next((d for d in self.decisions if d.open), None)

    def _latest(self, stage: int) -> Optional[Decision]:
        return next((d for d in reversed(self.decisions) if d.stage == stage), None)

    def replay(self) -> None:
        for record in self.own_records() + self.labels:
            kind = record.get("type")
            stage = int(record.get("stage_index", 0)) + 1
            if kind == "DecisionPending" and record.get("success"):
                self._close_open()  # a second one on the stage: the first was dropped on timeout
                self.decisions.append(Decision(stage, float(record["stamp"]), "pending", open=True))
            elif kind == "StageSucceeded":
                self._stage_succeeded(record, stage)
            elif kind == "FailureDetected" and record.get("terminal") and record.get("decided_by") == 2:
                self.operator_failure.add(stage)
            elif kind == "EpisodeEnded" or (kind == "summary" and self.ended is None):
                self.ended = record
                self._close_open()
            elif kind == "OperatorLabel" and record.get("kind") == LabelKind.VERDICT:
                self._verdict(record, stage)

    def _close_open(self) -> None:
        pending = self._open()
        if pending is not None:
            pending.open = False

    def _stage_succeeded(self, record: Dict[str, Any], stage: int) -> None:
        pending = self._open()
        by_operator = record.get("decided_by") == 2
        reason = str(record.get("reason") or "")
        confirms = ("confirmed" in reason if pending is not None and pending.stage == stage
                    else "confirmed by operator" in reason)
        if by_operator and confirms:
            if pending is None:  # its DecisionPending is missing from the log
                pending = Decision(stage, float(record["stamp"]), "pending")
                self.decisions.append(pending)
                self.notes.append(f"stage {stage}: a confirmation without its pending decision in the log")
            pending.confirmed_by = pending.confirmed_by or str(record.get("decider") or "operator")
        elif by_operator:
            self.operator_success.add(stage)
        elif record.get("decided_by") == 1 and not (pending is not None and pending.stage == stage):
            self.decisions.append(Decision(stage, float(record["stamp"]), "applied"))
        # decided by MODEL with a pending one open: the pending decision, applied after the wait
        self._close_open()

    def _applied_verdict(self, label: Dict[str, Any], verdict: int, source: str, stage: int) -> None:
        """Apply a verdict to the model's pending success it answered, or record the operator's own decision."""
        pending = self._open()
        if _answers_pending(label):
            # Its StageSucceeded or EpisodeEnded, written before the label, may have closed it.
            target = pending or self._latest(stage)
        else:
            if pending is not None:
                pending.open = False  # dropped on timeout before this verdict came
            target = None
        if target is not None:
            target.open = False
            if verdict == Verdict.NOT_YET:
                target.vetoed = target.vetoed or f"not_yet by {source}"
            elif verdict == Verdict.SUCCESS:
                target.confirmed_by = target.confirmed_by or source
            elif verdict == Verdict.FAILURE:
                target.vetoed = target.vetoed or f"overridden by {source}'s failure verdict"
        elif verdict == Verdict.SUCCESS:
            self.operator_success.add(stage)
        elif verdict == Verdict.FAILURE:
            self.operator_failure.add(stage)
        # a NOT_YET with no pending success took back success votes: a veto, of no decision

    def _verdict(self, label: Dict[str, Any], stage: int) -> None:
        applied, late = bool(label.get("applied")), bool(label.get("late"))
        verdict, source = label.get("verdict"), str(label.get("source") or "")
        name = Verdict(verdict).name.lower() if verdict in Verdict._value2member_map_ else "?"
        if not (applied or late):
            return
        if applied:
            self._applied_verdict(label, verdict, source, stage)
            return
        decision = self._latest(stage)
        if decision is None:
            if verdict != Verdict.NOT_YET:
                self.unscored_late += 1
            return
        if verdict == Verdict.NOT_YET:
            decision.vetoed = decision.vetoed or f"late not_yet by {source}"
        elif verdict == Verdict.FAILURE and self.ended is not None and self.ended.get("status") == 3:
            decision.vetoed = decision.vetoed or f"late failure verdict by {source}"
        elif verdict == Verdict.SUCCESS:
            decision.confirmed_by = decision.confirmed_by or source
        else:
            self.unscored_late += 1
            self.notes.append(f"a late {name} label by {source} on an episode that did not end with success")

    # ---- the numbers -------------------------------------------------------------------

    def stage_results(self) -> List[Tuple[int, str]]:
        """Return (stage, result) for every model decision and every operator-only stage."""
        decided = {d.stage for d in self.decisions}
        results = [(d.stage, d.result) for d in self.decisions]
        results += [(s, "fn") for s in sorted(self.operator_success - decided)]
        results += [(s, "tn") for s in sorted(self.operator_failure - decided - self.operator_success)]
        return results

    def timing(self) -> Tuple[float, Optional[Dict[str, Any]]]:
        """Return (episode seconds, the summary or None)."""
        own = self.own_records()
        summary = next((r for r in reversed(own) if r.get("type") == "summary"), None)
        if summary is not None and summary.get("duration_s") is not None:
            return float(summary["duration_s"]), summary
        stamps = [float(r["stamp"]) for r in own if isinstance(r.get("stamp"), (int, float))]
        return max([self.log.start_stamp] + stamps) - self.log.start_stamp, None

    def takeovers(self, duration: float, summary: Optional[Dict[str, Any]]) -> Tuple[int, float]:
        if summary is not None and "interventions" in summary:
            return int(summary["interventions"]), float(summary.get("intervention_s") or 0.0)
        count, seconds, since = 0, 0.0, None
        for label in self.labels_of():
            if not label.get("applied"):
                continue
            if label.get("kind") == LabelKind.INTERVENTION_START:
                count, since = count + 1, float(label["stamp"])
            elif label.get("kind") == LabelKind.INTERVENTION_END and since is not None:
                seconds, since = seconds + float(label["stamp"]) - since, None
        if since is not None:  # still under a takeover when the log stops
            seconds += max(0.0, self.log.start_stamp + duration - since)
        return count, seconds

    def result(self) -> Dict[str, Any]:
        self.replay()
        duration, summary = self.timing()
        counts = dict.fromkeys(RESULTS, 0)
        for _, result in self.stage_results():
            counts[result] += 1
        labels = self.labels_of()
        vetoes = [r for r in labels if r.get("kind") == LabelKind.VERDICT and r.get("verdict") == Verdict.NOT_YET]
        alerts = [r for r in self.own_records() if r.get("type") == "FailureDetected" and _is_task_alert(r)]
        dismissed = [r for r in labels if r.get("kind") == LabelKind.DISMISS_ALERT and r.get("applied")]
        takeovers, takeover_s = self.takeovers(duration, summary)
        notes = list(self.notes)
        if summary is None:
            notes.insert(0, "no summary (a torn log, or the episode still ran): time up to its last record")
        status = (summary or self.ended or {}).get("status_name") or "no summary"
        return {
            "episode_id": self.log.episode_id, "log": self.log.path, "status": str(status).lower(),
            "decided_by": _decided_by(summary, self.ended), "duration_s": duration,
            "has_summary": summary is not None, "counts": counts, **_rates(counts),
            "decisions": [dict(dataclasses.asdict(d), result=d.result) for d in self.decisions],
            "stage_results": self.stage_results(),
            "vetoes": {"applied": sum(1 for r in vetoes if r.get("applied")),
                       "late": sum(1 for r in vetoes if r.get("late"))},
            "alerts": [_kind_name(r.get("kind")) for r in alerts],
            "dismissed": [_kind_name(r.get("alert_kind")) for r in dismissed],
            "takeovers": takeovers, "takeover_s": takeover_s,
            "refused": sum(1 for r in labels if not (r.get("applied") or r.get("late"))),
            "unscored_late_labels": self.unscored_late, "notes": notes,
        }


def _decided_by(summary: Optional[Dict[str, Any]], ended: Optional[Dict[str, Any]]) -> str:
    if summary is not None and summary.get("decided_by"):
        return str(summary["decided_by"])
    if ended is not None and ended.get("decided_by_name"):
        return str(ended["decided_by_name"]).lower()
    return ""


def operator_agreement(folders: Sequence[str]) -> Dict[str, Any]:
    """Read the episode logs in ``folders`` and return the agreement, per episode and pooled (JSON-ready)."""
    paths, notes = find_logs(folders)
    logs = [log for log in (_read(path, notes) for path in paths) if log is not None]
    if not logs:
        raise ValueError("none of the episode logs could be read: " + "; ".join(notes))
    logs.sort(key=lambda log: (log.start_stamp, log.path))
    episodes: Dict[str, _Episode] = {}
    for log in logs:
        if log.episode_id in episodes:
            notes.append(f"episode id {log.episode_id} is in more than one log: labels naming it "
                         f"from other logs go to the latest, {os.path.basename(log.path)}")
        episodes[log.episode_id] = _Episode(log)
    all_labels: List[Dict[str, Any]] = []
    strangers = 0
    for log in logs:
        for record in log.records:
            if record.get("type") != "OperatorLabel":
                continue
            all_labels.append(record)
            owner = record.get("episode_id")
            if owner == log.episode_id:
                continue
            if owner in episodes:
                episodes[owner].labels.append(record)
            else:
                strangers += 1
    if strangers:
        notes.append(f"{strangers} label(s) name no episode in these logs (counted by source only)")
    rows = [episode.result() for episode in episodes.values()]
    return {"folders": [str(f) for f in folders], "episodes": rows,
            "pooled": _pooled(rows, all_labels), "notes": notes}


def _pooled(rows: List[Dict[str, Any]], labels: List[Dict[str, Any]]) -> Dict[str, Any]:
    counts = dict.fromkeys(RESULTS, 0)
    by_stage: Dict[int, Dict[str, int]] = {}
    for row in rows:
        for stage, result in row["stage_results"]:
            counts[result] += 1
            by_stage.setdefault(stage, dict.fromkeys(RESULTS, 0))[result] += 1
    seconds = sum(row["duration_s"] for row in rows)
    vetoes = {k: sum(row["vetoes"][k] for row in rows) for k in ("applied", "late")}
    alerts = [kind for row in rows for kind in row["alerts"]]
    dismissed = [kind for row in rows for kind in row["dismissed"]]
    takeovers = sum(row["takeovers"] for row in rows)
    takeover_s = sum(row["takeover_s"] for row in rows)
    sources: Dict[str, Dict[str, int]] = {}
    for label in labels:
        how = "applied" if label.get("applied") else "late" if label.get("late") else "refused"
        entry = sources.setdefault(str(label.get("source") or "(no source)"),
                                   {"applied": 0, "late": 0, "refused": 0})
        entry[how] += 1
    return {
        "episodes": len(rows), "episode_s": seconds, "counts": counts, **_rates(counts),
        "by_stage": {str(stage): dict(by_stage[stage], **_rates(by_stage[stage]))
                     for stage in sorted(by_stage)},
        "vetoes": dict(vetoes, total=vetoes["applied"] + vetoes["late"],
                       per_hour=_per_hour(vetoes["applied"] + vetoes["late"], seconds)),
        "false_alarms": {
            "alerts": len(alerts), "dismissed": len(dismissed),
            "share": len(dismissed) / len(alerts) if alerts else None,
            "by_kind": {kind: {"alerts": alerts.count(kind), "dismissed": dismissed.count(kind)}
                        for kind in sorted(set(alerts) | set(dismissed))},
        },
        "takeovers": {"count": takeovers, "per_episode": takeovers / len(rows) if rows else None,
                      "seconds": takeover_s, "share": takeover_s / seconds if seconds > 0 else None},
        "refused": sum(entry["refused"] for entry in sources.values()),
        "unscored_late_labels": sum(row["unscored_late_labels"] for row in rows),
        "labels_by_source": {name: sources[name] for name in sorted(sources)},
    }
