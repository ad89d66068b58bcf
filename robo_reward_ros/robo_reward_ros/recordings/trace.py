# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What a replay produced for one episode, in one shape whether it came from the offline pipeline or from the live node.

Estimates (one per inference step), events, and the episode's ground truth, with the files they are
written to and read from.

Stamps are seconds from the episode's first frame. Files in a replay folder:
``estimates.jsonl`` / ``estimates.csv`` (one row per estimate), ``events.jsonl`` /
``events.csv`` (one row per event), ``episodes.json`` (per episode: metadata and the truth).
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
from typing import Any, Dict, List, Optional, Sequence

from robo_reward_ros.recordings.episode import Episode, truth_at

ESTIMATE_CSV_FIELDS = ("episode", "stamp", "stage", "progress", "success_prob", "reward",
                       "stage_succeeded", "frames", "latency_s", "gt_stage", "gt_success",
                       "gt_progress", "camera")
EVENT_CSV_FIELDS = ("episode", "stamp", "stage", "type", "kind", "terminal", "task_failure",
                    "status", "text")


@dataclasses.dataclass
class EstimateRecord:
    episode: str
    stamp: float  # newest frame scored
    stage: int
    progress: float  # newest frame's progress (what the node publishes)
    success_prob: Optional[float]
    reward: float
    stage_succeeded: bool
    frame_stamps: List[float]
    frame_progress: List[float]
    frame_success: List[float]
    latency_s: float = 0.0
    gt_stage: Optional[int] = None  # truth at the newest frame
    gt_success: Optional[bool] = None
    gt_progress: Optional[float] = None
    camera: str = ""  # which camera's window (one estimate per camera and step)

    @property
    def frames(self) -> int:
        return len(self.frame_stamps)


@dataclasses.dataclass
class EventRecord:
    episode: str
    stamp: float
    stage: int
    type: str  # stage_succeeded | failure | episode_ended | verifier
    kind: str = ""  # failure kind (regression, stall, ...) for failures; confirmed | vetoed for the verifier
    terminal: bool = False
    task_failure: bool = False
    status: str = ""  # episode_ended: succeeded, failed, timed_out, idle (aborted)
    text: str = ""


@dataclasses.dataclass
class EpisodeTrace:
    episode: Episode
    estimates: List[EstimateRecord] = dataclasses.field(default_factory=list)
    events: List[EventRecord] = dataclasses.field(default_factory=list)
    bag: str = ""
    # A streamed recording keeps no frames: its first camera's frame stamps, the recording's
    # time of stamp 0 (ns), and per camera what the intake received, accepted and refused.
    stamps: Optional[List[float]] = None
    origin_ns: int = 0
    cameras: Dict[str, Dict[str, Any]] = dataclasses.field(default_factory=dict)

    def add_truth(self, record: EstimateRecord) -> EstimateRecord:
        row = truth_at(self.episode, record.stamp)
        if row is not None:
            record.gt_stage, record.gt_success, record.gt_progress = (
                row.stage, row.success, row.progress)
        return record

    # --- decisions, as the robot would read them ---------------------------------------------
    @property
    def succeeded_stamp(self) -> Optional[float]:
        """When the monitor declared the whole task done (last stage succeeded), or None."""
        last = len(self.episode.instructions) - 1
        for event in self.events:
            if event.type == "stage_succeeded" and event.stage == last:
                return event.stamp
        return None

    @property
    def first_failure(self) -> Optional[EventRecord]:
        return next((e for e in self.events if e.type == "failure" and e.task_failure), None)

    def summary(self) -> Dict[str, Any]:
        episode = self.episode
        truth = episode.truth or []
        stamps = episode.stamps if self.stamps is None else self.stamps
        extra = {"cameras": self.cameras, "origin_ns": self.origin_ns} if self.cameras else {}
        return {
            **episode.metadata(), "bag": self.bag, **extra, "frames": len(stamps),
            "stamps": stamps,
            "gt_progress": [r.progress for r in truth], "gt_success": [r.success for r in truth],
            "gt_stage": [r.stage for r in truth],
            "gt_success_stamp": episode.success_stamp(),
            "gt_failure_stamp": episode.failure_stamp,
            "estimates": len(self.estimates),
            "final_progress": self.estimates[-1].progress if self.estimates else None,
            "detected_success_stamp": self.succeeded_stamp,
            "first_failure": dataclasses.asdict(self.first_failure) if self.first_failure else None,
        }


def write_traces(traces: Sequence[EpisodeTrace], out_dir: str,
                 extra: Optional[Dict[str, Any]] = None) -> None:
    os.makedirs(out_dir, exist_ok=True)
    estimates = [dataclasses.asdict(e) for t in traces for e in t.estimates]
    events = [dataclasses.asdict(e) for t in traces for e in t.events]
    _jsonl(os.path.join(out_dir, "estimates.jsonl"), estimates)
    _jsonl(os.path.join(out_dir, "events.jsonl"), events)
    _csv(os.path.join(out_dir, "estimates.csv"), ESTIMATE_CSV_FIELDS,
         [{**e, "frames": len(e["frame_stamps"])} for e in estimates])
    _csv(os.path.join(out_dir, "events.csv"), EVENT_CSV_FIELDS, events)
    with open(os.path.join(out_dir, "episodes.json"), "w") as handle:
        json.dump({"episodes": [t.summary() for t in traces], **(extra or {})}, handle, indent=1)


def _jsonl(path: str, rows: List[Dict[str, Any]]) -> None:
    with open(path, "w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def _csv(path: str, fields: Sequence[str], rows: List[Dict[str, Any]]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in fields})


def read_replay(out_dir: str) -> Dict[str, Any]:
    """``{"episodes": [summary...], "estimates": {name: [record...]}, "events": {...}, ...}`` from a replay folder.

    This is what ``robo-reward eval`` reads.
    """
    with open(os.path.join(out_dir, "episodes.json")) as handle:
        data = json.load(handle)
    for kind in ("estimates", "events"):
        grouped: Dict[str, List[Dict[str, Any]]] = {e["name"]: [] for e in data["episodes"]}
        with open(os.path.join(out_dir, f"{kind}.jsonl")) as handle:
            for line in handle:
                if line.strip():
                    row = json.loads(line)
                    grouped.setdefault(row["episode"], []).append(row)
        data[kind] = grouped
    return data
