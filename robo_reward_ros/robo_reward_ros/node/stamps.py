"""ROS time stamps to seconds and back, for the node and for clients alike.

Kept apart from messages.py, which converts the core's results and so imports the pipeline and the
monitor: a client (rclpy only) needs the stamps and nothing of the core.
"""
from builtin_interfaces.msg import Time


def to_time(seconds: float) -> Time:
    nanoseconds = int(round(seconds * 1e9))
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def to_seconds(stamp: Time) -> float:
    return stamp.sec + stamp.nanosec * 1e-9
