# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Command-line tools of robo_reward_ros (no ROS needed): argument parsing only."""
import sys
from typing import List


def no_progress_bars() -> None:
    """--quiet: no library progress bars either (transformers' "Loading weights", hub downloads).

    Read by huggingface_hub when transformers is imported, which the commands do after parsing.
    """
    import os
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def module_list(text: str) -> List[str]:
    """Split a comma-separated ``--plugin-modules`` value into module names, blanks dropped."""
    return [name.strip() for name in text.split(",") if name.strip()]


def fail(command: str, exc: BaseException) -> int:
    """Report an expected failure (bad input, a missing file) as one line; exit status 1."""
    print(f"robo-reward {command}: {exc}", file=sys.stderr)
    return 1
