# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A process's or thread's /proc stat line, read past its command name (Linux)."""
from typing import List


def stat_fields(path: str) -> List[str]:
    """Return the fields after the command name: the state first, then the parent pid; OSError if gone.

    The name is in parentheses and may itself hold spaces and ")", so the line is split at the last one.
    """
    with open(path) as stat:
        return stat.read().rsplit(")", 1)[1].split()
