# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episodes already scored, kept per episode so a re-run of ``replay`` on many hours of bags redoes only what changed.

Each episode's result is stored as ``OUT/scored/NAME.json`` with a key: a hash of the model (for a
local checkpoint also its files' sizes and modification times: a retrained checkpoint in the same
folder is another model), every node parameter value, the reading options and the bag's own
metadata (its size and message counts, which change when the bag does). Same key: the stored
result is used; ``--force`` ignores it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any, Dict, List, Optional

from robo_reward_ros.recordings.output_paths import path_inside, safe_file_name
from robo_reward_ros.recordings.trace import EpisodeTrace, EstimateRecord, EventRecord

FOLDER = "scored"


def bag_identity(bag: str) -> Dict[str, Any]:
    """Return the bag's metadata.yaml text and file sizes: cheap to read, and different for another recording."""
    if os.path.isfile(bag):  # a bare .mcap file
        stat = os.stat(bag)
        return {"file": os.path.basename(bag), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    with open(os.path.join(bag, "metadata.yaml")) as handle:
        metadata = handle.read()
    sizes = {name: os.path.getsize(os.path.join(bag, name)) for name in sorted(os.listdir(bag))
             if os.path.isfile(os.path.join(bag, name))}
    return {"metadata": metadata, "sizes": sizes}


def model_files(model_id: str) -> Dict[str, Any]:
    """Return a local checkpoint's files with their sizes and modification times (nothing for a hub id)."""
    if not model_id or not os.path.isdir(model_id):
        return {}
    found = {}
    for name in sorted(os.listdir(model_id)):
        path = os.path.join(model_id, name)
        if os.path.isfile(path):
            stat = os.stat(path)
            found[name] = [stat.st_size, stat.st_mtime_ns]
    return found


def run_key(values: Dict[str, Any], reading: Dict[str, Any]) -> Dict[str, Any]:
    """Return what every episode of a run shares: model (and its files), node parameters, how bags are read."""
    return {"parameters": {k: values[k] for k in sorted(values)}, "reading": reading,
            "model_files": model_files(str(values.get("model.id") or ""))}


def episode_key(run: Dict[str, Any], bag: str, index: int) -> str:
    text = json.dumps({**run, "bag": bag_identity(bag), "episode_index": index}, sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclasses.dataclass
class StoredTrace:
    """A scored episode read back: what write_traces and the MCAP writer need of an EpisodeTrace."""

    summary_row: Dict[str, Any]
    estimates: List[EstimateRecord]
    events: List[EventRecord]

    @property
    def name(self) -> str:
        return self.summary_row["name"]

    def summary(self) -> Dict[str, Any]:
        return self.summary_row


class ScoredEpisodes:
    def __init__(self, out_dir: str, force: bool = False) -> None:
        self.folder = os.path.join(out_dir, FOLDER)
        self.force = force

    def _path(self, name: str) -> str:
        return path_inside(self.folder, safe_file_name(name) + ".json")

    def load(self, name: str, key: str) -> Optional[StoredTrace]:
        """Return the stored result of this episode with this key, or None (absent, changed, or --force)."""
        if self.force or not os.path.isfile(self._path(name)):
            return None
        try:
            with open(self._path(name)) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None  # a run killed while writing: score it again
        if data.get("key") != key:
            return None
        return StoredTrace(data["summary"], [EstimateRecord(**e) for e in data["estimates"]],
                           [EventRecord(**e) for e in data["events"]])

    def store(self, trace: EpisodeTrace, key: str) -> None:
        os.makedirs(self.folder, exist_ok=True)
        path = self._path(trace.episode.name)
        with open(path + ".part", "w") as handle:
            json.dump({"key": key, "summary": trace.summary(),
                       "estimates": [dataclasses.asdict(e) for e in trace.estimates],
                       "events": [dataclasses.asdict(e) for e in trace.events]}, handle)
        os.replace(path + ".part", path)  # a killed run leaves no half-written result
