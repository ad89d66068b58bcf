# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Show that a process restarted after SIGKILL can stay deaf to a Fast DDS peer that outlived it.

Fast DDS 3.2 marks a peer's shared-memory port broken only when its dead listener was caught
waiting or processing. gdb stops the victim where its listener thread is between two messages,
SIGKILLs it there, and a restarted victim (same participant id, so same port id) is then never
sent a message by the survivor, which still pushes into the old, unlinked segment. A participant
created after the restart hears the new victim at once. Explained in docs/troubleshooting.md.

    . scripts/env.sh && python scripts/fastdds_respawn_repro.py [--runs 3] [--stop between|kill|sigint]
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

VICTIM = r"""
import os, rclpy
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node("respawn_victim")
echo = node.create_publisher(String, "respawn_echo", 10)
node.create_subscription(String, "respawn_frames",
                         lambda msg: echo.publish(String(data=str(os.getpid()))), 10)
try:
    rclpy.spin(node)
except KeyboardInterrupt:
    pass
"""
# Entry of Listener::pop: the listener released its last buffer and does not wait yet.
BETWEEN_MESSAGES = "eprosima::fastdds::rtps::SharedMemManager::Listener::pop"


class Survivor:
    """A participant that publishes frames and records which victim pids echo them."""

    def __init__(self, rclpy, name: str):
        from std_msgs.msg import String
        self.rclpy, self.string = rclpy, String
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.frames = self.node.create_publisher(String, "respawn_frames", 10)
        self.heard = set()
        self.node.create_subscription(String, "respawn_echo",
                                      lambda msg: self.heard.add(int(msg.data)), 10)

    def wait_for(self, pid: int, timeout: float):
        """Seconds until the process echoed a frame, or None."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            self.frames.publish(self.string(data="frame"))
            self.executor.spin_once(timeout_sec=0.02)
            if pid in self.heard:
                return time.monotonic() - start
        return None

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.rclpy.shutdown(context=self.context)


def deleted_ports() -> list:
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-2] for line in maps
                       if "fastdds_port" in line and line.rstrip().endswith("(deleted)")})


def kill_between_messages(pid: int) -> None:
    subprocess.run(["gdb", "-q", "-batch", "-p", str(pid), "-ex", f"break {BETWEEN_MESSAGES}",
                    "-ex", "continue", "-ex", "kill"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--wait", type=float, default=30.0,
                        help="seconds to wait for the restarted victim (default 30)")
    parser.add_argument("--stop", choices=("between", "kill", "sigint"), default="between",
                        help="between: SIGKILL between two messages (default); kill: SIGKILL "
                             "wherever the victim is; sigint: a clean stop")
    args = parser.parse_args()
    if args.stop == "between" and shutil.which("gdb") is None:
        sys.exit("gdb is needed to stop the victim between two messages (or use --stop kill)")
    import rclpy
    import rclpy.executors
    deaf = 0
    for run in range(1, args.runs + 1):
        survivor = Survivor(rclpy, "respawn_survivor")
        victim = subprocess.Popen([sys.executable, "-c", VICTIM])
        try:
            if survivor.wait_for(victim.pid, 30.0) is None:
                sys.exit("the first victim was never heard: is ROS 2 set up (scripts/env.sh)?")
            if args.stop == "kill":
                victim.kill()
            elif args.stop == "sigint":
                victim.send_signal(signal.SIGINT)
            else:
                kill_between_messages(victim.pid)
            victim.wait(30)
            victim = subprocess.Popen([sys.executable, "-c", VICTIM])
            heard = survivor.wait_for(victim.pid, args.wait)
            fresh = Survivor(rclpy, "respawn_fresh")
            fresh_heard = fresh.wait_for(victim.pid, 30.0)
            fresh.close()
            deaf += heard is None
            print(f"run {run}: restarted victim heard by the survivor: "
                  f"{'no' if heard is None else f'after {heard:.1f} s'}; by a participant made "
                  f"after the restart: {'no' if fresh_heard is None else f'after {fresh_heard:.1f} s'}"
                  f"; survivor maps removed ports: {deleted_ports() or 'none'}", flush=True)
        finally:
            victim.kill()
            victim.wait()
            survivor.close()
    print(f"{deaf} of {args.runs} restarted victims never heard by the survivor "
          f"within {args.wait:.0f} s (pid {os.getpid()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
