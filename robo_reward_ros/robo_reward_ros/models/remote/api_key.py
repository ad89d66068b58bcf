# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward server's API key, read the same way by the server and by the robots' remote backend.

From a file (``ROBO_REWARD_API_KEY_FILE`` or ``--api-key-file``) that only its owner may read, or
from ``ROBO_REWARD_API_KEY``; never from a ROS parameter (any peer in the domain can read those)
and never logged. Ray-free and ROS-free.
"""
from __future__ import annotations

import os
import stat
from typing import Mapping, Optional

KEY_ENV = "ROBO_REWARD_API_KEY"
KEY_FILE_ENV = "ROBO_REWARD_API_KEY_FILE"
MIN_KEY_CHARS = 16
MAX_KEY_CHARS = 4096


class ApiKeyError(ValueError):
    """The key cannot be used; the message says why (and never holds the key)."""


def read_api_key(path: Optional[str] = None, environ: Mapping[str, str] = os.environ) -> str:
    """Return the configured key ('' when none is): ``path``, else the file or value the environment names."""
    path = path or environ.get(KEY_FILE_ENV, "")
    if path:
        return _read_key_file(path)
    key = environ.get(KEY_ENV, "").strip()
    if key:
        _check_key(key, f"${KEY_ENV}")
    return key


def _read_key_file(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise ApiKeyError(f"API key file {path} can be read by other users (mode {stat.S_IMODE(mode):o}): "
                                  f"chmod 600 {path}")
            raw = handle.read(MAX_KEY_CHARS + 1)
    except OSError as exc:
        raise ApiKeyError(f"cannot read the API key file {path}: {exc.strerror}") from None
    try:
        key = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise ApiKeyError(f"API key file {path} must hold printable ASCII") from None
    _check_key(key, f"API key file {path}")
    return key


def _check_key(key: str, where: str) -> None:
    if not MIN_KEY_CHARS <= len(key) <= MAX_KEY_CHARS or not key.isprintable() or any(c.isspace() for c in key):
        raise ApiKeyError(f"{where}: a key must be {MIN_KEY_CHARS} to {MAX_KEY_CHARS} printable characters "
                          "without spaces (e.g. `openssl rand -hex 32`)")
