# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Count how often a camera's first frame is lost although its publisher already sees the subscriber.

Discovery runs in both directions separately. ``publisher.get_subscription_count() > 0`` says the
camera's side matched the node's reader; the node's reader may not have matched the camera's
writer yet, and a best-effort frame that arrives before it has is dropped. A controller that
sends one frame and waits for its step (a lock-step Gymnasium wrapper, the tests' Cameras) then
waits for good unless it sends again: RewardClient users resend (docs/troubleshooting.md).

Each run starts a fresh subscriber process (best effort, as the node's camera subscription),
waits until the publisher counts it, publishes frame 1 at once, frame 2 one second later, and
reads back which frames the subscriber got.

    . scripts/env.sh && python scripts/first_frame_loss_repro.py [--runs 20]
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

SUBSCRIBER = r"""
import rclpy
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node("first_frame_subscriber")
# The echo reaches a reader that joins late: reliable and transient local, kept.
echo = node.create_publisher(String, "first_frame_echo", QoSProfile(
    depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL))
node.create_subscription(String, "first_frame_frames", echo.publish, qos_profile_sensor_data)
try:
    rclpy.spin(node)
except KeyboardInterrupt:
    pass
"""


def one_run(node, frames, heard, String, executor) -> tuple:
    """Return (frame 1 arrived, frame 2 arrived, seconds from start to the publisher's match)."""
    heard.clear()
    child = subprocess.Popen([sys.executable, "-c", SUBSCRIBER])
    try:
        start = time.monotonic()
        while frames.get_subscription_count() == 0:
            executor.spin_once(timeout_sec=0.01)
            if time.monotonic() - start > 60:
                raise RuntimeError("the subscriber was never discovered")
        matched = time.monotonic() - start
        frames.publish(String(data="1"))
        second_at = time.monotonic() + 1.0
        while time.monotonic() < second_at:
            executor.spin_once(timeout_sec=0.05)
        frames.publish(String(data="2"))
        deadline = time.monotonic() + 5.0
        while "2" not in heard and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        return "1" in heard, "2" in heard, matched
    finally:
        child.send_signal(signal.SIGINT)
        child.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    import rclpy
    import rclpy.executors
    from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                           qos_profile_sensor_data)
    from std_msgs.msg import String
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    rclpy.init()
    node = rclpy.create_node("first_frame_camera")
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    frames = node.create_publisher(String, "first_frame_frames", qos_profile_sensor_data)
    heard = set()
    node.create_subscription(String, "first_frame_echo", lambda msg: heard.add(msg.data), QoSProfile(
        depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    lost_first = lost_second = 0
    for run in range(args.runs):
        first, second, matched = one_run(node, frames, heard, String, executor)
        lost_first += not first
        lost_second += not second
        print(f"run {run + 1}: publisher matched after {matched:.2f} s; frame 1 "
              f"{'arrived' if first else 'LOST'}, frame 2 {'arrived' if second else 'LOST'}",
              flush=True)
    print(f"first frame lost in {lost_first} of {args.runs} runs; the frame 1 s later in "
          f"{lost_second}")
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
