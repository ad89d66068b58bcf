# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Per-episode JSON Lines logs: where each episode's file is, and how to read one back.

The writer (``best_effort_log.py``) hands every record to the kernel with unbuffered ``os.write``
calls on an ``O_APPEND`` descriptor, so nothing waits in a user-space buffer when the process is
killed (SIGKILL, a crash): a kill can at worst tear the line being written, and
``read_episode_log`` skips a torn last line. Events are also ``os.fsync``-ed, so they survive a
power loss too; estimates are fsync-ed only on request, because they are frequent and one lost
estimate is harmless.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from typing import AbstractSet, Any, Dict, List

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
# File systems allow 255 bytes per name: an id longer than this is shortened and made unique by a
# hash of the whole id, so ``episode_<id>.<n>.jsonl`` always fits.
MAX_ID_CHARS_IN_NAME = 96


def episode_file_id(episode_id: str) -> str:
    """Return the id as it appears in a file name: unsafe characters become ``_``, a long id is cut and hashed."""
    safe = _UNSAFE.sub("_", episode_id).lstrip(".") or "_"
    if len(safe) <= MAX_ID_CHARS_IN_NAME:
        return safe
    digest = hashlib.sha256(episode_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{safe[:MAX_ID_CHARS_IN_NAME - 17]}-{digest}"


def episode_log_path(directory: str, episode_id: str) -> str:
    """``<directory>/episode_<id>.jsonl``, the id mapped by ``episode_file_id``."""
    return os.path.join(directory, f"episode_{episode_file_id(episode_id)}.jsonl")


def unused_episode_log_path(directory: str, episode_id: str,
                            taken: AbstractSet[str] = frozenset()) -> str:
    """Return the episode's log path, or ``episode_<id>.<n>.jsonl`` when an episode of that id was logged before.

    That happens for an id given twice: a log is never appended to by a second episode. Anything
    at the path counts, a dangling symlink too (``lexists``): a log is never written through a link.
    ``taken``: paths of logs not on the disk yet (waiting for a full disk).
    """
    path = episode_log_path(directory, episode_id)
    number = 1
    while os.path.lexists(path) or path in taken:
        number += 1
        path = episode_log_path(directory, episode_id)[:-len(".jsonl")] + f".{number}.jsonl"
    return path


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
