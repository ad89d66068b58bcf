# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Soak run of the reward node with a disk that fills and frees while it runs (issue 20).

The installed reward_node runs in its own process with a real (tiny, offline) Robometer
checkpoint and its episode logs in a fresh directory. This process is the robot around it: a
camera, a controller reset service, an operator calling start_episode. Every few seconds it
fills the node's "disk" and later frees it: the node process's RLIMIT_FSIZE is lowered to one
byte (every write that grows a file fails with EFBIG, as ENOSPC would on a full disk) and raised
back. The node's output goes to a pipe, which the limit does not touch.

At the end: every episode that ended must have had its reset delivered to the controller, every
start_episode call must have been answered, and no episode log may lack its final record.

    python bench/soak_disk.py --minutes 10 --out bench/results/soak_disk.json
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Set

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import qos_profile_sensor_data
from robo_reward_msgs.msg import FailureEvent, ResetRequest, RewardEstimate
from robo_reward_msgs.srv import StartEpisode
from sensor_msgs.msg import Image
from std_srvs.srv import Trigger

from robo_reward_ros.core.best_effort_log import incomplete_episode_logs
from robo_reward_ros.core.episode_log import read_episode_log
from robo_reward_ros.node.node_process import installed_executable, stop_process
from robo_reward_ros.node.stamps import to_time
from robo_reward_ros.simulation.demo_assets import demo_checkpoint
from robo_reward_ros.simulation.synthetic_scene import render_scene
from robo_reward_ros.node.qos_profiles import EVENTS_QOS
from soak_schedule import run_schedule, wait_until_serving

INSTRUCTION = "put the red block on the green square"


def parse_args(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--camera-hz", type=float, default=15.0)
    parser.add_argument("--episode-sec", type=float, default=4.0,
                        help="episode time limit: each episode ends and requests a reset")
    parser.add_argument("--start-episode-period", type=float, default=7.0,
                        help="seconds between operator start_episode calls")
    parser.add_argument("--full-sec", type=float, default=20.0, help="disk full this long")
    parser.add_argument("--free-sec", type=float, default=25.0, help="then free this long")
    parser.add_argument("--model", default="", help="checkpoint dir (default: tiny, offline)")
    parser.add_argument("--out", default="", help="JSON report path")
    return parser.parse_args(argv)


class Robot:
    """Camera, operator, controller and listener, in one rclpy node."""

    def __init__(self, node, camera_hz: float) -> None:
        self.node = node
        self.camera = node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
        self.start = node.create_client(StartEpisode, "/reward_node/start_episode")
        node.create_service(Trigger, "soak/reset", self._reset)
        node.create_subscription(ResetRequest, "reset_request", self._on_reset_request,
                                 EVENTS_QOS)
        node.create_subscription(RewardEstimate, "reward", self._on_estimate, EVENTS_QOS)
        node.create_subscription(FailureEvent, "failure_events", self._on_failure, EVENTS_QOS)
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.camera_hz = camera_hz
        self.stamp = time.time()
        self.frame_index = 0
        self.counts = {"frames_sent": 0, "estimates": 0, "start_episode_calls": 0,
                       "start_episode_answers": 0, "start_episode_refused": 0,
                       "reset_requests": 0, "controller_reset_calls": 0,
                       "episode_log_error_events": 0, "disk_full_periods": 0}
        self.reset_requested: Set[str] = set()
        self.estimates_while_full = 0
        self.disk_full = False
        self.log_status: Dict[str, str] = {}
        self._pending = []

    def _reset(self, request, response):
        self.counts["controller_reset_calls"] += 1
        response.success, response.message = True, "reset done"
        return response

    def _on_reset_request(self, msg) -> None:
        self.counts["reset_requests"] += 1
        self.reset_requested.add(msg.episode_id)

    def _on_estimate(self, msg) -> None:
        self.counts["estimates"] += 1
        self.estimates_while_full += int(self.disk_full)

    def _on_failure(self, msg) -> None:
        self.counts["episode_log_error_events"] += int(
            msg.kind == FailureEvent.KIND_EPISODE_LOG_ERROR)

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            if status.name.endswith(": episode log"):
                self.log_status = {"message": status.message,
                                   **{kv.key: kv.value for kv in status.values}}

    def publish_frame(self) -> None:
        self.frame_index += 1
        self.stamp += 1.0 / self.camera_hz
        pixels = render_scene(self.frame_index, 160, 120)
        msg = Image(height=120, width=160, encoding="rgb8", step=480, data=pixels.tobytes())
        msg.header.stamp = to_time(self.stamp)
        self.camera.publish(msg)
        self.counts["frames_sent"] += 1

    def start_episode(self, number: int) -> None:
        if not self.start.service_is_ready():
            return
        self.counts["start_episode_calls"] += 1
        future = self.start.call_async(StartEpisode.Request(episode_id=f"soak-{number:05d}",
                                                            reason="operator reset"))
        future.add_done_callback(self._answered)
        self._pending.append(future)

    def _answered(self, future) -> None:
        self.counts["start_episode_answers"] += 1
        self.counts["start_episode_refused"] += int(not future.result().success)

    def unanswered(self) -> int:
        return sum(1 for f in self._pending if not f.done())


def _read_pipe(pipe, sink: List[bytes]) -> None:
    for line in iter(pipe.readline, b""):
        sink.append(line)


def run(args: argparse.Namespace) -> Dict:
    log_dir = tempfile.mkdtemp(prefix="soak-disk-episodes-")
    model = args.model or demo_checkpoint()
    node_cmd = [installed_executable("reward_node"), "--ros-args"]
    for name, value in (("model.preset", '""'), ("model.id", model),
                        ("model.backend", "robometer"), ("model.precision", "fp32"),
                        ("model.device", "cpu"), ("reset.service", "/soak/reset"),
                        ("reset.timeout_sec", "1.0"), ("reset.retries", "3"),
                        ("inference.rate_hz", "4.0"), ("episode_log.directory", log_dir),
                        ("timeout.episode_sec", str(args.episode_sec)),
                        ("instruction", INSTRUCTION)):
        node_cmd += ["-p", f"{name}:={value}"]
    child = subprocess.Popen(node_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True)
    output: List[bytes] = []
    reader = threading.Thread(target=_read_pipe, args=(child.stdout, output), daemon=True)
    reader.start()
    limits = resource.prlimit(child.pid, resource.RLIMIT_FSIZE)
    rclpy.init()
    ros = rclpy.create_node("soak_disk_robot")
    robot = Robot(ros, args.camera_hz)
    wait_until_serving(ros, robot.start, child, 180.0)
    numbers = iter(range(1, 1_000_000))

    def frame(now):
        robot.publish_frame()
        return 1.0 / args.camera_hz

    def start_episode(now):
        robot.start_episode(next(numbers))
        return args.start_episode_period

    def toggle_disk(now):
        robot.disk_full = not robot.disk_full
        robot.counts["disk_full_periods"] += int(robot.disk_full)
        resource.prlimit(child.pid, resource.RLIMIT_FSIZE,
                         (1, limits[1]) if robot.disk_full else limits)
        return args.full_sec if robot.disk_full else args.free_sec

    crashed = False
    try:
        crashed = run_schedule(ros, child, time.monotonic(), args.minutes, [
            (0.0, frame), (args.start_episode_period, start_episode),
            (args.free_sec, toggle_disk)])
        # Space returns for good; the node catches up before it is stopped.
        if child.poll() is None:
            resource.prlimit(child.pid, resource.RLIMIT_FSIZE, limits)
        robot.disk_full = False
        settle = time.monotonic() + 30.0
        while time.monotonic() < settle and (robot.unanswered() or robot.log_status.get(
                "records_waiting", "0") != "0" or robot.counts["controller_reset_calls"]
                < len(robot.reset_requested)):
            rclpy.spin_once(ros, timeout_sec=0.1)
    finally:
        exit_code = stop_process(child, 60.0)
        reader.join(timeout=5)
        ros.destroy_node()
        rclpy.try_shutdown()
    text = b"".join(output).decode("utf-8", "replace")
    logs = sorted(os.listdir(log_dir))
    logged_ids = set()
    for name in logs:
        records = read_episode_log(os.path.join(log_dir, name))
        if records:
            logged_ids.add(records[0].get("episode_id"))
    incomplete = incomplete_episode_logs(log_dir)
    return {
        "minutes": args.minutes, "crashed": crashed, "exit_code": exit_code,
        "tracebacks": text.count("Traceback"), "counts": robot.counts,
        "estimates_while_disk_full": robot.estimates_while_full,
        "episodes_with_reset_request": len(robot.reset_requested),
        "resets_delivered_to_controller": robot.counts["controller_reset_calls"],
        "start_episode_unanswered": robot.unanswered(),
        "episode_logs": len(logs),
        "episodes_ended_without_a_log": sorted(robot.reset_requested - logged_ids)[:10],
        "incomplete_logs": [os.path.basename(p) for p in incomplete],
        "node_episode_log_status": robot.log_status,
        "log_directory": log_dir,
    }


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = run(args)
    print(json.dumps(report, indent=2))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=2)
    ok = (not report["crashed"] and report["exit_code"] == 0 and not report["incomplete_logs"]
          and report["start_episode_unanswered"] == 0
          and report["resets_delivered_to_controller"] >= report["episodes_with_reset_request"]
          and not report["episodes_ended_without_a_log"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
