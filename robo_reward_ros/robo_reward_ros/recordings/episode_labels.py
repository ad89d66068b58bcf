# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Outcome labels for recordings that carry none: what eval judges and finetune learns robot bags by.

A robot's rosbag2 has no ``/episode`` outcome and no ``/ground_truth``, but whoever ran the robot
knows which attempts succeeded and roughly when. A labels file says so, one row per episode, keyed
by the name replay gives the episode (the bag folder's name, or ``BAG_eNNN`` when ``--split-topic``
or ``--split-gap`` cut one bag into several)::

    episode,outcome,success_sec,failure_sec,task,failure_kind
    pick_0001,success,12.4,,pick cube,
    pick_0002,failure,,8.0,pick cube,drop

or the same as YAML, a mapping from episode name to those fields. Seconds count from the
episode's first camera frame, replay's time base; without them eval reports no detection delay for
that episode. A success without ``success_sec`` is done at its last frame. Progress truth for a
success rises linearly to 1 at its success (the papers' rule for success-only data, what finetune
already applies to a labelled video); a failure or partial episode gets an outcome but no
progress truth.
"""
from __future__ import annotations

import csv
import dataclasses
import os
from typing import Any, Dict, List, Optional, Sequence

from robo_reward_ros.recordings.episode import OUTCOMES

FIELDS = ("outcome", "success_sec", "failure_sec", "task", "failure_kind")


class LabelsError(ValueError):
    """A labels file cannot be used; the message names the file and the row."""


@dataclasses.dataclass(frozen=True)
class EpisodeLabel:
    outcome: str
    success_sec: Optional[float] = None
    failure_sec: Optional[float] = None
    task: str = ""
    failure_kind: str = ""

    def done_at(self, last_stamp: float) -> float:
        """When a success was done: its ``success_sec``, else the episode's last frame."""
        return self.success_sec if self.success_sec is not None else last_stamp

    def progress_at(self, stamp: float, last_stamp: float) -> Optional[float]:
        """Progress truth at ``stamp`` (seconds from the episode's start); None unless a success."""
        if self.outcome != "success":
            return None
        done = self.done_at(last_stamp)
        return 1.0 if done <= 0 else min(1.0, max(0.0, stamp / done))


def load_labels(path: str) -> Dict[str, EpisodeLabel]:
    """Read a labels file (``.csv``, or ``.yaml``/``.yml``); LabelsError names the file and row of a bad entry."""
    if not os.path.isfile(path):
        raise LabelsError(f"{path}: no such labels file")
    rows: List[tuple] = []  # (where, episode name, fields)
    if path.endswith((".yaml", ".yml")):
        import yaml
        with open(path) as handle:
            data = yaml.safe_load(handle)
        if not isinstance(data, dict):
            raise LabelsError(f"{path}: expected a mapping from episode name to its label")
        for name, fields in data.items():
            if isinstance(fields, str):
                fields = {"outcome": fields}
            if not isinstance(fields, dict):
                raise LabelsError(f"{path}: {name}: expected an outcome or a mapping of {', '.join(FIELDS)}")
            rows.append((f"{path}: {name}", str(name), fields))
    else:
        with open(path, newline="") as handle:
            reader = csv.DictReader(handle)
            if not reader.fieldnames or "episode" not in reader.fieldnames or "outcome" not in reader.fieldnames:
                raise LabelsError(f"{path}: the header must name at least the columns episode and outcome")
            for line, row in enumerate(reader, start=2):
                rows.append((f"{path}:{line}", (row.get("episode") or "").strip(), row))
    labels: Dict[str, EpisodeLabel] = {}
    for where, name, fields in rows:
        if not name:
            raise LabelsError(f"{where}: no episode name")
        if name in labels:
            raise LabelsError(f"{where}: episode {name} is labelled twice")
        labels[name] = _label(where, fields)
    return labels


def _label(where: str, fields: Dict[str, Any]) -> EpisodeLabel:
    unknown = set(fields) - set(FIELDS) - {"episode"}
    if unknown:
        raise LabelsError(f"{where}: unknown field(s) {sorted(unknown)}; known: episode, {', '.join(FIELDS)}")
    outcome = str(fields.get("outcome") or "").strip()
    if outcome not in OUTCOMES:
        raise LabelsError(f"{where}: outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
    seconds = {key: _seconds(where, key, fields.get(key)) for key in ("success_sec", "failure_sec")}
    if seconds["success_sec"] is not None and outcome != "success":
        raise LabelsError(f"{where}: success_sec is given but the outcome is {outcome}")
    if seconds["failure_sec"] is not None and outcome != "failure":
        raise LabelsError(f"{where}: failure_sec is given but the outcome is {outcome}")
    return EpisodeLabel(outcome, seconds["success_sec"], seconds["failure_sec"],
                        str(fields.get("task") or "").strip(), str(fields.get("failure_kind") or "").strip())


def _seconds(where: str, key: str, value: Any) -> Optional[float]:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise LabelsError(f"{where}: {key} {value!r} is not a number of seconds") from None
    if not seconds >= 0.0:
        raise LabelsError(f"{where}: {key} must be >= 0 seconds from the episode's first frame, not {value!r}")
    return seconds


def check_names(labels: Dict[str, EpisodeLabel], names: Sequence[str], path: str) -> List[str]:
    """Return the episodes without a label; a label naming no episode is an error (a typo loses data silently)."""
    unknown = sorted(set(labels) - set(names))
    if unknown:
        raise LabelsError(f"{path}: label(s) for episode(s) not in the replay: {', '.join(unknown)} "
                          f"(episodes: {', '.join(sorted(names)) or 'none'})")
    return [n for n in names if n not in labels]


def label_replay(data: Dict[str, Any], labels: Dict[str, EpisodeLabel], path: str,
                 strict: bool = True) -> List[str]:
    """Give a merged replay's episodes (and their estimates' truth) their labels; returns the unlabelled names.

    A label overrides the outcome a bag's ``/episode`` carried: it is the user's word for it.
    ``strict``: a label naming no episode of the replay is an error (not so for finetune's held-out
    replay, whose labels file also covers the training episodes).
    """
    names = [s["name"] for s in data["episodes"]]
    unlabelled = (check_names(labels, names, path) if strict
                  else [n for n in names if n not in labels])
    for summary in data["episodes"]:
        label = labels.get(summary["name"])
        if label is None:
            continue
        stamps = summary.get("stamps") or [0.0]
        last = stamps[-1]
        summary.update(outcome=label.outcome, failure_kind=label.failure_kind,
                       task=label.task or summary.get("task") or summary["instructions"][0],
                       gt_success_stamp=label.success_sec, gt_failure_stamp=label.failure_sec,
                       labels=path)
        if len(summary["instructions"]) != 1:
            continue  # where stages start is not labelled: no per-estimate progress truth
        for estimate in data["estimates"].get(summary["name"], []):
            estimate["gt_progress"] = label.progress_at(estimate["stamp"], last)
    return unlabelled
