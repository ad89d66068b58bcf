# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Text from a peer (an instruction, a reason, a format field) made safe to put in a log line.

A newline in an instruction would write a line of its own into the node's log (one that can look
like ``[ERROR] [reward_node]: ...``), and ANSI escape codes would reach the terminal raw. Every
character of Unicode category C (controls, format characters such as zero-width spaces,
surrogates, private use, unassigned) is written as its escape instead: one record, one line.
"""
import unicodedata


def escape_controls(text: str) -> str:
    if all(unicodedata.category(c)[0] != "C" for c in text):
        return text
    return "".join(c if unicodedata.category(c)[0] != "C" else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def has_visible_character(text: str) -> bool:
    """Tell whether ``text`` shows anything: a letter, number, punctuation or symbol."""
    return any(unicodedata.category(c)[0] in "LNPS" for c in text)
