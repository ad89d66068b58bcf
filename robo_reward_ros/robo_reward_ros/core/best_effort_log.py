# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episode logs that never stop the reward loop: a full disk or an unwritable directory is reported, not fatal.

Scoring, decisions, topics and resets must go on while the log cannot be written. A record that
cannot be written waits in memory (bounded; estimates beyond the bound are dropped and a
``log_gap`` record says how many) and is retried, in order, every ``retry_after_sec``: when space
returns, the log resumes where it stopped, even in the middle of a line a full disk tore. A log
whose final ``summary`` record never reached the disk is what ``incomplete_episode_logs`` finds.

A log file is created new (``O_EXCL``, ``O_NOFOLLOW``): never through a symlink someone planted at
its path, never appended to an existing file. A log directory that other users can write to
(group or world write permission, or another owner than us or root) is refused, reported like an
unwritable one: whoever can write there could plant links or files among the logs.
"""
from __future__ import annotations

import collections
import dataclasses
import errno
import json
import os
import shutil
import stat
import time
from typing import Any, Callable, Deque, Dict, List, Optional, Union

from robo_reward_ros.core.episode_log import read_episode_log, unused_episode_log_path

# Records waiting for the disk, all logs together: about 4 MB of estimates at ~400 bytes each.
MAX_PENDING_RECORDS = 10000
# A new log file: created here and now, not opened through a link (O_NOFOLLOW where the OS has it).
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)


@dataclasses.dataclass
class LogHealth:
    """What /diagnostics and the monitor need to know about the episode logs."""

    directory: str
    error: str = ""  # why the last write failed; "" while everything is written
    failed_writes: int = 0
    records_written: int = 0
    dropped_records: int = 0
    pending_records: int = 0
    incomplete_logs: int = 0  # logs still waiting for records (their summary among them)
    failing_since: Optional[float] = None


class _Gap:
    """Stands in the queue for estimates dropped while the disk was full."""

    def __init__(self) -> None:
        self.dropped = 0

    def record(self) -> Dict[str, Any]:
        return {"type": "log_gap", "records_dropped": self.dropped,
                "reason": "the episode log could not be written (disk full or not writable)"}


@dataclasses.dataclass
class _Item:
    data: Union[Dict[str, Any], _Gap]
    durable: bool
    encoded: Optional[memoryview] = None  # what remains to be written once started


class _PendingLog:
    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: Optional[int] = None
        self.queue: Deque[_Item] = collections.deque()
        self.finished = False


def check_log_directory(directory: str) -> str:
    """Return "" when new logs can be created in ``directory``, else why not (checked at configure)."""
    try:
        directory_fd = _open_log_directory(directory)
        try:
            probe = f".write-check-{os.getpid()}"
            fd = os.open(probe, _CREATE_FLAGS, 0o600, dir_fd=directory_fd)
            try:
                os.write(fd, b"\n")
            finally:
                os.close(fd)
                os.unlink(probe, dir_fd=directory_fd)
        finally:
            os.close(directory_fd)
    except OSError as exc:
        return f"episode log directory {directory} is not writable: {exc.strerror or exc}"
    return ""


def _open_log_directory(directory: str) -> int:
    """Create the directory if need be (``0700``) and open it; refuse it when other users can write to it.

    Files are then created relative to the descriptor: the directory checked is the one written to.
    """
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        info = os.fstat(fd)
        if info.st_mode & 0o022 or info.st_uid not in (os.geteuid(), 0):
            raise PermissionError(errno.EACCES, (
                f"other users can write to it (mode {stat.filemode(info.st_mode)}, owner uid {info.st_uid}); "
                "make it ours alone: chmod go-w"))
    except BaseException:
        os.close(fd)
        raise
    return fd


def free_bytes(directory: str) -> Optional[int]:
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return None


def incomplete_episode_logs(directory: str) -> List[str]:
    """Find the logs in ``directory`` without a ``summary`` record: the end never reached the disk.

    Operator labels may follow the summary (late labels of the ended episode).

    A kill, a crash or a disk that stayed full until shutdown leaves such a log.
    """
    incomplete = []
    for name in sorted(os.listdir(directory)):
        if not (name.startswith("episode_") and name.endswith(".jsonl")):
            continue
        path = os.path.join(directory, name)
        try:
            records = read_episode_log(path)
        except (OSError, ValueError):
            incomplete.append(path)
            continue
        if not any(record.get("type") == "summary" for record in records):
            incomplete.append(path)
    return incomplete


class BestEffortEpisodeLog:
    """One episode log at a time, plus earlier ones still waiting for the disk. Never raises on I/O.

    Not thread-safe: the task monitor calls it under the pipeline's lock.
    """

    def __init__(self, directory: str, fsync_estimates: bool = False,
                 retry_after_sec: float = 1.0, clock: Callable[[], float] = time.monotonic,
                 max_pending: int = MAX_PENDING_RECORDS) -> None:
        self.directory = directory
        self._fsync_estimates = fsync_estimates
        self._retry_after = retry_after_sec
        self._clock = clock
        self._max_pending = max_pending
        self._logs: List[_PendingLog] = []  # oldest first; the last is current unless finished
        self._retry_at = 0.0
        self.health = LogHealth(directory)

    # --- the current episode ------------------------------------------------------------------
    def open(self, episode_id: str) -> str:
        """Start the log of a new episode; return its path (the file may only appear later)."""
        self.finish()
        path = unused_episode_log_path(self.directory, episode_id, {log.path for log in self._logs})
        self._logs.append(_PendingLog(path))
        self._attempt()
        return path

    def write_event(self, record: Dict[str, Any]) -> None:
        self._add(record, durable=True)

    def write_estimate(self, record: Dict[str, Any]) -> None:
        self._add(record, durable=self._fsync_estimates)

    def finish(self) -> None:
        """End the current episode's log: no more records; it is closed once all of them are written."""
        if self._logs and not self._logs[-1].finished:
            self._logs[-1].finished = True
            self._attempt()

    def retry(self) -> None:
        """Write what waits, when a retry is due (call it periodically)."""
        if self._pending() and self._clock() >= self._retry_at:
            self._attempt(force=True)

    def close(self) -> None:
        """Last attempt (shutdown): what still cannot be written stays missing, and detectable."""
        self.finish()
        self._attempt(force=True)
        for log in self._logs:
            self._close_fd(log)
        self._logs = []

    # --- internals ----------------------------------------------------------------------------
    def _pending(self) -> int:
        return sum(len(log.queue) for log in self._logs)

    def _add(self, record: Dict[str, Any], durable: bool) -> None:
        if not self._logs or self._logs[-1].finished:
            return  # no episode log open: nothing to add to
        queue = self._logs[-1].queue
        if not durable and self._pending() >= self._max_pending:
            # Estimates are frequent and one lost is harmless; events are rare and always kept.
            if not queue or not isinstance(queue[-1].data, _Gap):
                queue.append(_Item(_Gap(), durable=True))
            queue[-1].data.dropped += 1
            self.health.dropped_records += 1
        else:
            queue.append(_Item(record, durable))
        self._attempt()

    def _attempt(self, force: bool = False) -> None:
        if not force and self.health.error and self._clock() < self._retry_at:
            self._update_counts()
            return
        error = ""
        for log in list(self._logs):  # each on its own: one file's trouble must not hold the others
            try:
                self._drain(log)
            except OSError as exc:
                where = f" ({exc.filename})" if exc.filename and exc.filename != log.path else ""
                error = error or f"cannot write {log.path}: {exc.strerror or exc}{where}"
                continue
            if log.finished and not log.queue:
                self._close_fd(log)
                self._logs.remove(log)
        if error:
            self.health.failed_writes += 1
            if not self.health.error:
                self.health.failing_since = self._clock()
            self._retry_at = self._clock() + self._retry_after
        else:
            self.health.failing_since = None
        self.health.error = error
        self._update_counts()

    def _drain(self, log: _PendingLog) -> None:
        if not log.queue:
            return
        if log.fd is None:
            directory_fd = _open_log_directory(self.directory)
            try:
                log.fd = os.open(os.path.basename(log.path), _CREATE_FLAGS, 0o600, dir_fd=directory_fd)
                os.fsync(directory_fd)  # a new file's directory entry is only durable once its directory is
            finally:
                os.close(directory_fd)
        while log.queue:
            item = log.queue[0]
            if item.encoded is None:
                data = item.data.record() if isinstance(item.data, _Gap) else item.data
                try:
                    text = json.dumps(data, allow_nan=False, separators=(",", ":"))
                except (TypeError, ValueError) as exc:  # a bug, not the disk: say so, skip it
                    text = json.dumps({"type": "unwritable_record", "error": str(exc)})
                item.encoded = memoryview((text + "\n").encode())
            while item.encoded:  # a full disk may take part of a line: the rest follows later
                written = os.write(log.fd, item.encoded)
                item.encoded = item.encoded[written:]
            if item.durable:
                os.fsync(log.fd)
            log.queue.popleft()
            self.health.records_written += 1

    def _close_fd(self, log: _PendingLog) -> None:
        if log.fd is None:
            return
        try:
            os.fsync(log.fd)
        except OSError:
            pass  # reported by the writes; closing must not fail
        os.close(log.fd)
        log.fd = None

    def _update_counts(self) -> None:
        self.health.pending_records = self._pending()
        self.health.incomplete_logs = sum(1 for log in self._logs if log.queue)
