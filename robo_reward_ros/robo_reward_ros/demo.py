"""The README's first command: the reward node on a synthetic camera, watched from outside.

Starts the installed ``synthetic_camera`` and ``reward_node`` executables as separate
processes (as ``ros2 launch`` would), listens to their topics like an RL controller and an
operator console would, prints what arrives, and stops everything on exit or Ctrl-C.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from typing import List

import rclpy
from ament_index_python.packages import get_package_prefix
from diagnostic_msgs.msg import DiagnosticArray
from robo_reward_msgs.msg import TaskState

from robo_reward_ros.reward_node import LATCHED_QOS

STATUS_NAMES = {value: name[len("STATUS_"):].lower()
                for name, value in vars(TaskState).items() if name.startswith("STATUS_")}


def installed_executable(name: str) -> str:
    """Path of an executable this package installs (lib/robo_reward_ros/NAME)."""
    path = os.path.join(get_package_prefix("robo_reward_ros"), "lib", "robo_reward_ros", name)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{path} is missing: build the workspace first (scripts/setup.sh)")
    return path


def parse_args(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=15.0,
                        help="seconds to run before stopping (default 15)")
    parser.add_argument("--instruction", default="put the red block on the green square")
    parser.add_argument("--rate", type=float, default=15.0, help="camera rate in Hz")
    return parser.parse_args(argv)


def main(argv: List[str] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    children = [
        subprocess.Popen([installed_executable("synthetic_camera"), "--ros-args",
                          "-p", f"rate_hz:={args.rate}"]),
        subprocess.Popen([installed_executable("reward_node"), "--ros-args",
                          "-p", f"instruction:={args.instruction}"]),
    ]
    rclpy.init()
    node = rclpy.create_node("robo_reward_demo_listener")
    node.create_subscription(TaskState, "task_state", _print_state, LATCHED_QOS)
    node.create_subscription(DiagnosticArray, "/diagnostics", _print_diagnostics, 10)
    deadline = time.monotonic() + args.duration
    try:
        while time.monotonic() < deadline and all(c.poll() is None for c in children):
            rclpy.spin_once(node, timeout_sec=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        codes = _stop(children)
    print(f"demo: stopped; exit codes {codes}")
    return 0 if all(code == 0 for code in codes) else 1


def _print_state(msg: TaskState) -> None:
    print(f"task_state: episode {msg.episode_id} stage {msg.stage_index + 1}/{msg.stage_count} "
          f"{STATUS_NAMES.get(msg.status, msg.status)}: '{msg.instruction}' ({msg.reason})",
          flush=True)


def _print_diagnostics(msg: DiagnosticArray) -> None:
    for status in msg.status:
        values = {kv.key: kv.value for kv in status.values}
        print(f"diagnostics: {status.name}: {status.message} {values}", flush=True)


def _stop(children: List[subprocess.Popen]) -> List[int]:
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
    codes = []
    for child in children:
        try:
            codes.append(child.wait(timeout=10))
        except subprocess.TimeoutExpired:
            child.kill()
            codes.append(child.wait())
    return codes


if __name__ == "__main__":
    sys.exit(main())
