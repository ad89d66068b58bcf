"""Command-line tools of robo_reward_ros (no ROS needed): argument parsing only."""
import sys


def fail(command: str, exc: BaseException) -> int:
    """Report an expected failure (bad input, a missing file) as one line; exit status 1."""
    print(f"robo-reward {command}: {exc}", file=sys.stderr)
    return 1
