"""The README's first command: the reward node on a synthetic camera, watched from outside.

Starts the installed ``synthetic_camera`` and ``reward_node`` executables as separate
processes (as ``ros2 launch`` would), listens to their topics like an RL controller and an
operator console would, prints what arrives, and stops everything on exit or Ctrl-C.

Without ``--model`` the node loads a tiny Robometer-layout checkpoint built here, offline, with
random weights: the whole pipeline runs for real (decoding, window, Qwen3-VL forward pass,
heads, monitor, messages), but its progress numbers mean nothing.
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
from robo_reward_msgs.msg import FailureEvent, RewardEstimate, TaskState

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
    parser.add_argument("--model", default="",
                        help="Robometer checkpoint directory or id (default: a tiny untrained "
                             "checkpoint built offline on first use)")
    return parser.parse_args(argv)


def demo_checkpoint() -> str:
    """A tiny Robometer-layout checkpoint, built once into the user's cache."""
    path = os.path.join(os.path.expanduser("~"), ".cache", "robo_reward_ros",
                        "demo-robometer-tiny")
    if not os.path.isfile(os.path.join(path, "config.yaml")):
        from robo_reward_ros.models.tiny_checkpoints import build_checkpoint
        print(f"demo: building a tiny offline Robometer checkpoint in {path} ...", flush=True)
        build_checkpoint("robometer", path)
    return path


def main(argv: List[str] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    model = args.model or demo_checkpoint()
    if not args.model:
        print("demo: the model has random weights: its progress numbers are not meaningful",
              flush=True)
    children = [
        subprocess.Popen([installed_executable("synthetic_camera"), "--ros-args",
                          "-p", f"rate_hz:={args.rate}"]),
        subprocess.Popen([installed_executable("reward_node"), "--ros-args",
                          "-p", f"instruction:={args.instruction}", "-p", 'model.preset:=""',
                          "-p", f"model.id:={model}", "-p", "model.backend:=robometer",
                          "-p", "model.precision:=fp32", "-p", "model.device:=cpu",
                          "-p", 'episode_log.directory:=""',
                          "-p", "inference.rate_hz:=2.0"]),
    ]
    rclpy.init()
    node = rclpy.create_node("robo_reward_demo_listener")
    node.create_subscription(TaskState, "task_state", _print_state, LATCHED_QOS)
    node.create_subscription(DiagnosticArray, "/diagnostics", _print_diagnostics, 10)
    node.create_subscription(RewardEstimate, "reward", _print_estimate, 10)
    node.create_subscription(FailureEvent, "failure_events", _print_failure, 10)
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


def _print_estimate(msg: RewardEstimate) -> None:
    success = f"{msg.success_probability:.2f}" if msg.has_success_probability else "n/a"
    print(f"reward: stage {msg.stage_index + 1} progress {msg.progress:.3f} success_p {success} "
          f"reward {msg.reward:+.3f} frames {len(msg.frame_stamps)} "
          f"latency {msg.inference_latency_sec * 1000:.0f} ms", flush=True)


def _print_failure(msg: FailureEvent) -> None:
    print(f"failure event: kind {msg.kind} terminal {msg.terminal}: {msg.description}",
          flush=True)


def _print_diagnostics(msg: DiagnosticArray) -> None:
    for status in msg.status:
        if "camera" in status.name or "model" in status.name:
            values = {kv.key: kv.value for kv in status.values}
            keys = ("frames_received", "frames_dropped", "window_fill",
                    "inference_latency_p50_sec", "inference_latency_p95_sec", "last_error")
            shown = {k: values[k] for k in keys if values.get(k) not in (None, "", "n/a")}
            print(f"diagnostics: {status.name}: {status.message} {shown}", flush=True)


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
