# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Names from recordings made safe to be file names, and outputs kept under the folder the user gave.

A recording's episode name is data: a bag written elsewhere may call its episode ``../../x`` or
``/home/you``. Joined unchecked into ``--out``, it would write, or remove, outside it.
"""
from __future__ import annotations

import hashlib
import os
import re
import unicodedata

MAX_NAME_BYTES = 120  # file systems allow 255; the tools add suffixes (.json, .png, _0.mcap)
_UNSAFE = re.compile(r"[/\\:*?\"<>|]")


class UnsafeOutputPath(ValueError):
    """An output would land outside the folder it belongs in."""


def safe_file_name(name: str) -> str:
    """Return ``name`` if it is a plain, visible file name; else a readable safe one.

    A changed name ends in a hash of the original, so two names never become one.
    """
    text = str(name)
    cleaned = "".join("_" if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in text)
    cleaned = _UNSAFE.sub("_", cleaned).strip(" ")
    cleaned = cleaned.lstrip(".") or "episode"
    while len(cleaned.encode("utf-8")) > MAX_NAME_BYTES:
        cleaned = cleaned[:-1]
    if cleaned == text:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned}-{digest}"


def path_inside(folder: str, *parts: str) -> str:
    """Join ``parts`` under ``folder``; refuse a result that resolves anywhere else."""
    root = os.path.realpath(folder)
    path = os.path.join(folder, *parts)
    resolved = os.path.realpath(path)
    if os.path.commonpath([root, resolved]) != root or resolved == root:
        raise UnsafeOutputPath(f"{os.path.join(*parts)!r} would be written outside {folder}: refused")
    return path
