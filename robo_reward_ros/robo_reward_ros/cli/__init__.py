"""Command-line tools of robo_reward_ros (no ROS needed): argument parsing only."""
import sys


def no_progress_bars() -> None:
    """--quiet: no library progress bars either (transformers' "Loading weights", hub downloads).

    Read by huggingface_hub when transformers is imported, which the commands do after parsing.
    """
    import os
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def fail(command: str, exc: BaseException) -> int:
    """Report an expected failure (bad input, a missing file) as one line; exit status 1."""
    print(f"robo-reward {command}: {exc}", file=sys.stderr)
    return 1
