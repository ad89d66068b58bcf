# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episode ids: made up when nobody names the episode, checked when a caller does.

An id names the episode in every message and its log file: a made-up one must never repeat, across
restarts too; one from outside that is huge or holds control characters is refused with the reason.
"""
from __future__ import annotations

import itertools
import time
import uuid
from typing import Optional

MAX_EPISODE_ID_CHARS = 256

_EPISODE_COUNTER = itertools.count(1)
_RUN_TAG = uuid.uuid4().hex[:4]


def new_episode_id() -> str:
    """UTC start time, a random tag and a per-process counter, e.g. ``20261130T101500-7f3a-0003``.

    A node restarted within the same second must not reuse the id (and the log file) of the episode
    it was killed in.
    """
    return (f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{_RUN_TAG}-"
            f"{next(_EPISODE_COUNTER):04d}")


class InvalidEpisodeIdError(ValueError):
    """The id cannot name an episode; the message says why."""


def checked_episode_id(text: Optional[str]) -> Optional[str]:
    """Return the id stripped, None when empty (a new id is made); raise InvalidEpisodeIdError when unusable."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    if len(text) > MAX_EPISODE_ID_CHARS:
        raise InvalidEpisodeIdError(
            f"episode id has {len(text)} characters; at most {MAX_EPISODE_ID_CHARS} are accepted")
    if any(not ch.isprintable() for ch in text):
        raise InvalidEpisodeIdError("episode id holds control or non-printable characters")
    return text
