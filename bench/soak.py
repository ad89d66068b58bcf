# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Soak run of the reward node: hours-style abuse in minutes of real time.

The installed reward_node runs in its own process with a real (tiny, offline) Robometer
checkpoint. This process plays the robot around it: a 30 Hz camera with bad frames mixed in,
task changes at a fixed period, and a controller reset service that flaps (answers, refuses,
disappears). Every few seconds it samples the node's RSS and thread count and what the node
published. It ends with a table and a JSON report; exit status 1 if the node died.

    python bench/soak.py --minutes 30 --out bench/results/soak.json      # the full run
    python bench/soak.py --minutes 1 --task-period 10                       # the CI variant
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from typing import Dict, List

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import qos_profile_sensor_data
from robo_reward_msgs.msg import FailureEvent, RewardEstimate, StageSpec, TaskSpec, TaskState
from robo_reward_msgs.srv import SetTask
from sensor_msgs.msg import Image
from std_srvs.srv import Trigger

from robo_reward_ros.simulation.synthetic_scene import render_scene
from robo_reward_ros.node.node_process import installed_executable, start_process, stop_process
from robo_reward_ros.simulation.demo_assets import demo_checkpoint
from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_LISTENER_QOS
from robo_reward_ros.node.stamps import to_time
from soak_schedule import run_schedule, wait_until_serving

TASKS = [["put the red block on the green square"],
         ["pick up the red block", "place it on the green square"]]
BAD_FRAMES = ("encoding", "truncated", "zero_stamp", "stamp_back")


def parse_args(argv: List[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--camera-hz", type=float, default=30.0)
    parser.add_argument("--task-period", type=float, default=60.0, help="seconds per task")
    parser.add_argument("--bad-frame-rate", type=float, default=0.05,
                        help="share of camera frames that are bad")
    parser.add_argument("--flap-period", type=float, default=7.0,
                        help="seconds between controller service changes")
    parser.add_argument("--sample-period", type=float, default=2.0)
    parser.add_argument("--model", default="", help="checkpoint dir (default: tiny, offline)")
    parser.add_argument("--out", default="", help="JSON report path")
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args(argv)


def proc_status(pid: int) -> Dict[str, int]:
    with open(f"/proc/{pid}/status") as handle:
        fields = dict(line.split(":", 1) for line in handle if ":" in line)
    return {"threads": int(fields["Threads"]), "rss_kb": int(fields["VmRSS"].split()[0])}


class Robot:
    """Camera, task giver, flapping controller and listener, in one rclpy node."""

    def __init__(self, node, args, rng: random.Random) -> None:
        self.node, self.args, self.rng = node, args, rng
        self.camera = node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
        self.set_task = node.create_client(SetTask, "/reward_node/set_task")
        self.counts = {"frames_sent": 0, "bad_frames_sent": 0, "estimates": 0, "events": 0,
                       "task_failures": 0, "model_errors": 0, "camera_stale": 0, "states": 0,
                       "episodes_ended": 0, "tasks_set": 0, "reset_calls": 0,
                       "reset_refused": 0}
        self.diagnostics: Dict[str, Dict[str, str]] = {}
        node.create_subscription(RewardEstimate, "reward", self._on_estimate, EVENTS_QOS)
        node.create_subscription(FailureEvent, "failure_events", self._on_failure, EVENTS_QOS)
        node.create_subscription(TaskState, "task_state", self._on_state, LATCHED_LISTENER_QOS)
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 10)
        self.controller = None
        self.controller_mode = "answers"
        self.frame_index = 0
        self.stamp = time.time()

    def _on_estimate(self, msg) -> None:
        self.counts["estimates"] += 1

    def _on_failure(self, msg) -> None:
        self.counts["events"] += 1
        self.counts["task_failures"] += int(msg.task_failure)
        self.counts["model_errors"] += int(msg.kind == FailureEvent.KIND_MODEL_ERROR)
        self.counts["camera_stale"] += int(msg.kind == FailureEvent.KIND_CAMERA_STALE)

    def _on_state(self, msg) -> None:
        self.counts["states"] += 1
        self.counts["episodes_ended"] += int(msg.status in (
            TaskState.STATUS_SUCCEEDED, TaskState.STATUS_FAILED, TaskState.STATUS_TIMED_OUT))

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            self.diagnostics[status.name] = {kv.key: kv.value for kv in status.values}

    def _reset(self, request, response):
        self.counts["reset_calls"] += 1
        response.success = self.controller_mode == "answers"
        if not response.success:
            self.counts["reset_refused"] += 1
            response.message = "controller busy (soak flapping)"
        return response

    def flap_controller(self) -> None:
        """Cycle the controller: answers -> refuses -> absent -> answers ..."""
        order = ["answers", "refuses", "absent"]
        self.controller_mode = order[(order.index(self.controller_mode) + 1) % len(order)]
        if self.controller_mode == "absent" and self.controller is not None:
            self.node.destroy_service(self.controller)
            self.controller = None
        elif self.controller_mode != "absent" and self.controller is None:
            self.controller = self.node.create_service(Trigger, "soak/reset", self._reset)

    def publish_frame(self) -> None:
        self.frame_index += 1
        self.stamp += 1.0 / self.args.camera_hz
        self.counts["frames_sent"] += 1
        if self.rng.random() < self.args.bad_frame_rate:
            self.counts["bad_frames_sent"] += 1
            self.camera.publish(self._bad_frame(self.rng.choice(BAD_FRAMES)))
            return
        pixels = render_scene(self.frame_index, 320, 240)
        msg = Image(height=240, width=320, encoding="rgb8", step=960, data=pixels.tobytes())
        msg.header.stamp = to_time(self.stamp)
        self.camera.publish(msg)

    def _bad_frame(self, kind: str) -> Image:
        msg = Image(height=4, width=4, encoding="rgb8", step=12, data=bytes(48))
        msg.header.stamp = to_time(self.stamp)
        if kind == "encoding":
            msg.encoding = "16UC1"
        elif kind == "truncated":
            msg.data = bytes(40)
        elif kind == "zero_stamp":
            msg.header.stamp = to_time(0.0)
        else:  # a stamp from the past
            msg.header.stamp = to_time(self.stamp - 100.0)
        return msg

    def give_task(self, number: int) -> None:
        stages = TASKS[number % len(TASKS)]
        request = SetTask.Request(start_episode=True, task=TaskSpec(
            stages=[StageSpec(instruction=s) for s in stages]))
        if self.set_task.service_is_ready():
            self.set_task.call_async(request)
            self.counts["tasks_set"] += 1


def run(args: argparse.Namespace) -> Dict:
    rng = random.Random(args.seed)
    model = args.model or demo_checkpoint()
    node_cmd = [installed_executable("reward_node"), "--ros-args"]
    for name, value in (("model.preset", '""'), ("model.id", model),
                        ("model.backend", "robometer"), ("model.precision", "fp32"),
                        ("model.device", "cpu"), ("reset.service", "/soak/reset"),
                        ("reset.timeout_sec", "0.5"), ("reset.retries", "2"),
                        ("inference.rate_hz", "5.0"), ("episode_log.directory", '""'),
                        ("timeout.episode_sec", str(max(5.0, args.task_period / 2.0))),
                        ("instruction", TASKS[0][0])):
        node_cmd += ["-p", f"{name}:={value}"]
    # The node's log goes to a file: a pipe nobody reads during the run would fill and block it.
    log_dir = tempfile.TemporaryDirectory(prefix="soak_node_log_")
    log_path = os.path.join(log_dir.name, "reward_node.log")
    child = start_process(node_cmd, log_path)
    rclpy.init()
    ros = rclpy.create_node("soak_robot")
    robot = Robot(ros, args, rng)
    robot.flap_controller()  # start with a controller that answers
    samples: List[Dict] = []
    # The run's clock starts when the node serves.
    wait_until_serving(ros, robot.set_task, child, 120.0)
    start = time.monotonic()
    tasks = iter(range(1, 1_000_000))

    def frame(now):
        robot.publish_frame()
        return 1.0 / args.camera_hz

    def task(now):
        robot.give_task(next(tasks))
        return args.task_period

    def flap(now):
        robot.flap_controller()
        return args.flap_period

    def sample(now):
        samples.append({"t_sec": round(now - start, 1), **proc_status(child.pid),
                        **{k: robot.counts[k] for k in ("estimates", "events")}})
        return args.sample_period

    crashed = False
    try:
        crashed = run_schedule(ros, child, start, args.minutes, [
            (0.0, frame), (args.task_period, task), (args.flap_period, flap), (0.0, sample)])
    finally:
        exit_code = stop_process(child, 30.0)
        with open(log_path, "rb") as log:
            output = log.read().decode("utf-8", "replace")
        log_dir.cleanup()
        ros.destroy_node()
        rclpy.try_shutdown()
    camera = next((v for k, v in robot.diagnostics.items() if "camera" in k), {})
    model_status = next((v for k, v in robot.diagnostics.items() if k.endswith(": model")), {})
    half = [s for s in samples if s["t_sec"] >= (samples[-1]["t_sec"] / 2 if samples else 0)]
    report = {
        "minutes": args.minutes, "crashed": crashed, "exit_code": exit_code,
        "tracebacks": output.count("Traceback"), "counts": robot.counts,
        "node_frames_received": camera.get("frames_received"),
        "node_frames_rejected": camera.get("frames_rejected"),
        "node_model_errors_total": model_status.get("model_errors_total"),
        "inference_latency_p50_sec": model_status.get("inference_latency_p50_sec"),
        "inference_latency_p95_sec": model_status.get("inference_latency_p95_sec"),
        "rss_kb_first_last": [samples[0]["rss_kb"], samples[-1]["rss_kb"]] if samples else None,
        "rss_kb_second_half_min_max": ([min(s["rss_kb"] for s in half),
                                        max(s["rss_kb"] for s in half)] if half else None),
        "threads_min_max": ([min(s["threads"] for s in samples),
                             max(s["threads"] for s in samples)] if samples else None),
        "samples": samples,
    }
    return report


def print_report(report: Dict) -> None:
    print(f"{'t_sec':>7} {'rss_MB':>8} {'threads':>8} {'estimates':>10} {'events':>7}")
    for sample in report["samples"]:
        print(f"{sample['t_sec']:>7.1f} {sample['rss_kb'] / 1024:>8.1f} {sample['threads']:>8} "
              f"{sample['estimates']:>10} {sample['events']:>7}")
    summary = {k: v for k, v in report.items() if k != "samples"}
    print(json.dumps(summary, indent=2))


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = run(args)
    print_report(report)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as handle:
            json.dump(report, handle, indent=2)
    return 1 if report["crashed"] or report["exit_code"] != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
