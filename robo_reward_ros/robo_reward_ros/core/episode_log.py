"""Durable per-episode JSON Lines log: one file per episode, one record per line.

Every record goes to the kernel with a single unbuffered ``os.write`` on an ``O_APPEND``
descriptor, so nothing waits in a user-space buffer when the process is killed (SIGKILL, a
crash): a kill can at worst tear the line being written, and ``read_episode_log`` skips a torn
last line. Events are also ``os.fsync``-ed, so they survive a power loss too; estimates are
fsync-ed only on request, because they are frequent and one lost estimate is harmless.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def episode_log_path(directory: str, episode_id: str) -> str:
    """``<directory>/episode_<id>.jsonl``; characters unsafe in file names become ``_``."""
    return os.path.join(directory, f"episode_{_UNSAFE.sub('_', episode_id)}.jsonl")


def unused_episode_log_path(directory: str, episode_id: str) -> str:
    """Return the episode's log path, or ``episode_<id>.<n>.jsonl`` when an episode of that id was logged before.

    That happens for an id given twice: a log is never appended to by a second episode.
    """
    path = episode_log_path(directory, episode_id)
    number = 1
    while os.path.exists(path):
        number += 1
        path = episode_log_path(directory, episode_id)[:-len(".jsonl")] + f".{number}.jsonl"
    return path


def _fsync_directory(directory: str) -> None:
    # A new file's directory entry is only durable once the directory itself is synced.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class EpisodeLogWriter:
    """Appends records to one episode's file."""

    def __init__(self, path: str, fsync_estimates: bool = False) -> None:
        self.path = path
        self._fsync_estimates = fsync_estimates
        directory = os.path.dirname(os.path.abspath(path))
        # Logs hold what the robot saw and did: readable by their owner only.
        os.makedirs(directory, mode=0o700, exist_ok=True)
        self._fd: Optional[int] = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        _fsync_directory(directory)

    @property
    def closed(self) -> bool:
        return self._fd is None

    def append(self, record: Dict[str, Any], durable: bool) -> None:
        """Write one record as one line; ``durable`` also fsyncs it to the disk."""
        if self._fd is None:
            raise ValueError(f"episode log {self.path} is closed")
        data = (json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if durable:
            os.fsync(self._fd)

    def write_estimate(self, record: Dict[str, Any]) -> None:
        self.append(record, durable=self._fsync_estimates)

    def write_event(self, record: Dict[str, Any]) -> None:
        self.append(record, durable=True)

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None


def read_episode_log(path: str) -> List[Dict[str, Any]]:
    """All complete records of a log, in order.

    A torn last line (the writer was killed in the middle of it) is skipped; a bad line anywhere
    else means corruption and raises.
    """
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")
    records: List[Dict[str, Any]] = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if index == len(lines) - 1:
                break  # the last line has no newline yet: torn by a kill
            raise ValueError(f"{path}: line {index + 1} is not valid JSON") from None
    return records
