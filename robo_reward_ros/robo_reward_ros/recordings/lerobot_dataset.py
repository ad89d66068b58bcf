# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A local LeRobot dataset (format v3.0) read with pyarrow and PyAV, without LeRobot itself.

LeRobot needs Python >= 3.12 and an older torch than this project's venv, so the layout is read
directly (shared/docs/ecosystem-facts.md): ``meta/info.json`` (fps, features, path templates),
``meta/tasks.parquet`` (task text -> task_index), ``meta/episodes/chunk-*/file-*.parquet`` (per
episode: length, tasks, its rows ``dataset_from_index``..``dataset_to_index`` and, per camera key,
the mp4 file and the time span in it), ``data/chunk-*/file-*.parquet`` (per-frame rows, many
episodes per file) and ``videos/KEY/chunk-*/file-*.mp4`` (episodes concatenated). Frames are
decoded one at a time as the replay asks for them.
"""
from __future__ import annotations

import dataclasses
import glob
import heapq
import json
import os
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

SUPPORTED_VERSIONS = ("v3.0",)


class DatasetError(ValueError):
    """The folder is not a readable LeRobot v3 dataset; the message says which file and why."""


@dataclasses.dataclass(frozen=True)
class DatasetEpisode:
    index: int
    length: int
    tasks: Tuple[str, ...]
    row: Dict[str, object]  # the episode's row of meta/episodes (chunk/file indices, time spans)


def _pyarrow():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise RuntimeError("reading LeRobot datasets needs pyarrow (pinned in requirements/tools.txt)") from None
    return pq


class LeRobotFolder:
    """A LeRobot v3 dataset on disk."""

    def __init__(self, root: str) -> None:
        self.root = root
        info_path = os.path.join(root, "meta", "info.json")
        if not os.path.isfile(info_path):
            raise DatasetError(f"{root}: no meta/info.json (not a LeRobot dataset)")
        with open(info_path) as handle:
            self.info = json.load(handle)
        version = self.info.get("codebase_version", "")
        if version not in SUPPORTED_VERSIONS:
            raise DatasetError(f"{root}: LeRobot format {version or '(unknown)'}; supported: "
                               f"{', '.join(SUPPORTED_VERSIONS)} (convert older datasets with LeRobot's "
                               "convert_dataset_v21_to_v30)")
        self.fps = float(self.info["fps"])
        self.features: Dict[str, Dict[str, object]] = self.info["features"]
        self.video_keys = [k for k, f in self.features.items() if f.get("dtype") == "video"]
        self.tasks = self._read_tasks()
        self.episodes = self._read_episodes()

    @property
    def name(self) -> str:
        return os.path.basename(os.path.normpath(self.root))

    def _read_tasks(self) -> Dict[int, str]:
        path = os.path.join(self.root, "meta", "tasks.parquet")
        if not os.path.isfile(path):
            return {}
        table = _pyarrow().read_table(path)
        text = next((c for c in table.column_names if c != "task_index"), None)
        if text is None or "task_index" not in table.column_names:
            raise DatasetError(f"{path}: expected a task column and task_index")
        return dict(zip(table.column("task_index").to_pylist(), table.column(text).to_pylist()))

    def _read_episodes(self) -> List[DatasetEpisode]:
        files = sorted(glob.glob(os.path.join(self.root, "meta", "episodes", "chunk-*", "file-*.parquet")))
        if not files:
            raise DatasetError(f"{self.root}: no meta/episodes/chunk-*/file-*.parquet")
        episodes = []
        pq = _pyarrow()
        for path in files:
            for row in pq.read_table(path).to_pylist():
                tasks = tuple(row.get("tasks") or ())
                episodes.append(DatasetEpisode(int(row["episode_index"]), int(row["length"]), tasks, row))
        return sorted(episodes, key=lambda e: e.index)

    def data_files(self) -> List[str]:
        """Per-frame parquet files, relative to the root."""
        found = sorted(glob.glob(os.path.join(self.root, "data", "chunk-*", "file-*.parquet")))
        return [os.path.relpath(p, self.root) for p in found]

    def video_path(self, episode: DatasetEpisode, key: str) -> str:
        row = episode.row
        template = self.info.get("video_path") or "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
        return os.path.join(self.root, template.format(
            video_key=key, chunk_index=int(row[f"videos/{key}/chunk_index"]),
            file_index=int(row[f"videos/{key}/file_index"])))

    def instruction(self, episode: DatasetEpisode) -> str:
        """Return the episode's task text: its ``tasks`` entry, else the dataset's only task."""
        if episode.tasks:
            return episode.tasks[0]
        if len(self.tasks) == 1:
            return next(iter(self.tasks.values()))
        raise DatasetError(f"{self.root}: episode {episode.index} has no task text")

    def frames(self, episode: DatasetEpisode, key: str) -> Iterator[Tuple[float, np.ndarray]]:
        """Yield (seconds from the episode start, RGB) of one camera key, decoded one frame at a time."""
        import av
        if key not in self.video_keys:
            raise DatasetError(f"{self.root}: no video key {key} (video keys: {self.video_keys})")
        start = float(episode.row[f"videos/{key}/from_timestamp"])
        end = float(episode.row[f"videos/{key}/to_timestamp"])
        half = 0.5 / self.fps
        path = self.video_path(episode, key)
        try:
            container = av.open(path)
        except (OSError, av.error.FFmpegError) as exc:
            raise DatasetError(f"{path}: not a readable video ({exc})") from exc
        with container:
            stream = container.streams.video[0]
            if start > 0:
                container.seek(int(start / stream.time_base), stream=stream, backward=True)
            for frame in container.decode(stream):
                t = float(frame.time)
                if t < start - half:
                    continue
                if t >= end - half:
                    break
                yield t - start, frame.to_ndarray(format="rgb24")


def merged_frames(dataset: LeRobotFolder, episode: DatasetEpisode,
                  keys: Sequence[str]) -> Iterator[Tuple[float, str, np.ndarray]]:
    """Yield frames of several camera keys in time order: (stamp, key, RGB)."""
    def labelled(key: str):
        for stamp, rgb in dataset.frames(episode, key):
            yield stamp, key, rgb

    return heapq.merge(*[labelled(key) for key in keys], key=lambda item: (item[0], keys.index(item[1])))


def choose_keys(dataset: LeRobotFolder, keys: Optional[Sequence[str]]) -> List[str]:
    """Return the camera keys asked for (checked), or every video key of the dataset."""
    if not dataset.video_keys:
        raise DatasetError(f"{dataset.root}: the dataset has no video features")
    chosen = list(keys or dataset.video_keys)
    unknown = [k for k in chosen if k not in dataset.video_keys]
    if unknown:
        raise DatasetError(f"{dataset.root}: no camera key {unknown} (video keys: {dataset.video_keys})")
    return chosen
