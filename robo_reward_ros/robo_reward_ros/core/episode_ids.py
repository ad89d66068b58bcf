"""Episode ids from outside (a start_episode or set_task caller): refused with the reason when unusable.

An id names the episode in every message and its log file; one that is huge or holds control
characters would make messages, log lines and file names unreadable.
"""
from __future__ import annotations

from typing import Optional

MAX_EPISODE_ID_CHARS = 256


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
