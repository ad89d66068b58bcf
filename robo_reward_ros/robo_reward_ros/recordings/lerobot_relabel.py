# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A copy of a LeRobot v3 dataset with the reward model's per-frame labels added as columns.

LeRobot's training can then weight or filter by them (reward-weighted behaviour cloning, offline
RL). Every file is copied byte for byte except the per-frame parquet files (the columns below
appended to each row, the file's other columns and metadata unchanged) and ``meta/info.json`` (the
new features declared). The labels come from the node's pipeline as replay ran it, held from
each estimate until the next (the node publishes one estimate per step, not per frame):

- ``robo_reward.progress``, ``robo_reward.success_probability``: the newest estimate at or before
  the frame, averaged over the cameras; before the first estimate NaN, or with ``fill`` the first
  estimate held back to the episode's start (``first``) or 0 (``zero``), for trainers that
  cannot take NaN;
- ``robo_reward.reward``: the reward the node publishes with it (``reward.mode``);
- ``robo_reward.success``: the monitor has declared the task done at or before this frame;
- ``robo_reward.terminal``: the monitor has ended the episode (success, failure or timeout) at or
  before this frame.
"""
from __future__ import annotations

import bisect
import json
import math
import os
import shutil
from typing import Dict, List, Sequence

import numpy as np

PREFIX = "robo_reward."
FLOAT_COLUMNS = ("progress", "success_probability", "reward")
BOOL_COLUMNS = ("success", "terminal")
ENDED = ("succeeded", "failed", "timed_out")
FILLS = ("nan", "first", "zero")  # frames before an episode's first estimate


def frame_labels(trace, timestamps: Sequence[float], fill: str = "nan") -> Dict[str, np.ndarray]:
    """Per-frame labels of one episode at its frames' ``timestamps`` (seconds from its start)."""
    if fill not in FILLS:
        raise ValueError(f"fill must be one of {', '.join(FILLS)}, not {fill!r}")
    by_camera: Dict[str, List] = {}
    for estimate in trace.estimates:
        by_camera.setdefault(estimate.camera, []).append(estimate)
    stamps = {camera: [e.stamp for e in rows] for camera, rows in by_camera.items()}
    values = {name: np.full(len(timestamps), np.nan, dtype=np.float32) for name in FLOAT_COLUMNS}
    for index, t in enumerate(timestamps):
        latest = []
        for camera, rows in by_camera.items():
            position = bisect.bisect_right(stamps[camera], t + 1e-6) - 1
            if position >= 0:
                latest.append(rows[position])
        if latest:
            values["progress"][index] = np.mean([e.progress for e in latest])
            successes = [e.success_prob for e in latest if e.success_prob is not None]
            values["success_probability"][index] = np.mean(successes) if successes else math.nan
            values["reward"][index] = np.mean([e.reward for e in latest])
    scored = np.nonzero(~np.isnan(values["progress"]))[0]
    if fill != "nan" and len(scored):
        before = slice(0, scored[0])
        for name in FLOAT_COLUMNS:
            values[name][before] = values[name][scored[0]] if fill == "first" else 0.0
    summary = trace.summary()
    succeeded = summary.get("detected_success_stamp")
    ended = next((e.stamp for e in trace.events if e.type == "episode_ended" and e.status in ENDED), None)
    times = np.asarray(timestamps, dtype=np.float64)
    values["success"] = (times >= succeeded - 1e-6) if succeeded is not None else np.zeros(len(times), bool)
    values["terminal"] = (times >= ended - 1e-6) if ended is not None else np.zeros(len(times), bool)
    return values


def write_relabelled(dataset, traces: Dict[int, object], out_dir: str, fill: str = "nan") -> List[str]:
    """Copy ``dataset`` to ``out_dir`` with the label columns; episodes without a trace get NaN/False.

    ``fill``: the float labels of frames before an episode's first estimate (FILLS).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    if os.path.exists(out_dir):
        raise FileExistsError(f"{out_dir} exists: choose a new folder for the relabelled copy")
    refuse_links_out_of(dataset.root)
    shutil.copytree(dataset.root, out_dir, symlinks=True)
    changed = []
    for relative in dataset.data_files():
        table = pq.read_table(os.path.join(dataset.root, relative))
        episodes = table.column("episode_index").to_numpy()
        timestamps = table.column("timestamp").to_numpy().astype(np.float64)
        columns = {name: np.full(len(table), np.nan, np.float32) for name in FLOAT_COLUMNS}
        columns.update({name: np.zeros(len(table), bool) for name in BOOL_COLUMNS})
        for episode_index in np.unique(episodes):
            trace = traces.get(int(episode_index))
            if trace is None:
                continue
            rows = np.nonzero(episodes == episode_index)[0]
            for name, values in frame_labels(trace, timestamps[rows], fill).items():
                columns[name][rows] = values
        for name in FLOAT_COLUMNS + BOOL_COLUMNS:
            if PREFIX + name in table.column_names:
                table = table.drop_columns([PREFIX + name])
            table = table.append_column(PREFIX + name, pa.array(columns[name]))
        table = table.replace_schema_metadata(_huggingface_metadata(table.schema.metadata))
        target = os.path.join(out_dir, relative)
        if os.path.islink(target):  # a link kept by the copy: the new file replaces the link
            os.unlink(target)
        pq.write_table(table, target)
        changed.append(relative)
    info_path = os.path.join(out_dir, "meta", "info.json")
    info = dict(dataset.info)
    info["features"] = {**dataset.features, **new_features()}
    with open(info_path, "w") as handle:
        json.dump(info, handle, indent=4, ensure_ascii=False)
    return changed + [os.path.join("meta", "info.json")]


def refuse_links_out_of(root: str) -> None:
    """Refuse a dataset with a link that leads out of it; links inside it are copied as links.

    Copying what such a link points at would put a file from elsewhere on this machine (a key, a
    private recording) into a dataset that may then be shared.
    """
    real_root = os.path.realpath(root)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                continue
            target = os.path.realpath(path)
            if os.path.commonpath([real_root, target]) != real_root:
                raise ValueError(
                    f"{path} is a link to {os.readlink(path)}, outside the dataset: the copy would "
                    f"take that file in. Resolve the links you trust (cp -rL) into a folder and relabel that")


def new_features() -> Dict[str, Dict[str, object]]:
    """Return the label columns as LeRobot features (scalars: shape [1])."""
    features = {PREFIX + n: {"dtype": "float32", "shape": [1], "names": None} for n in FLOAT_COLUMNS}
    features.update({PREFIX + n: {"dtype": "bool", "shape": [1], "names": None} for n in BOOL_COLUMNS})
    return features


def _huggingface_metadata(metadata):
    """Declare the new columns in the Hugging Face datasets schema note, when the file has one."""
    metadata = dict(metadata or {})
    raw = metadata.get(b"huggingface")
    if raw is None:
        return metadata
    note = json.loads(raw)
    features = note.setdefault("info", {}).setdefault("features", {})
    for name in FLOAT_COLUMNS:
        features[PREFIX + name] = {"dtype": "float32", "_type": "Value"}
    for name in BOOL_COLUMNS:
        features[PREFIX + name] = {"dtype": "bool", "_type": "Value"}
    metadata[b"huggingface"] = json.dumps(note).encode()
    return metadata
