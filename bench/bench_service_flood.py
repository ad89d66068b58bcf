# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: the reward node's task services under a flood of calls, with a camera and a model running.

Two processes: the installed reward node (backend ``bench_sleep``: each step takes ``--model-s``
seconds, at ``inference.rate_hz`` 10, fed by a 10 Hz camera from this process) and this process,
which calls ``start_episode`` and ``set_task`` together, each at RATE calls/s for ``--seconds``,
then waits ``--drain`` seconds for the last answers. Per rate and service it prints calls sent,
answered (served), refused (answered "busy", with the reason), and lost (no answer at all after
the drain), and the answer latency p50/p95/max. Lost must be 0 at every rate: a controller that
retries on a timeout must get an answer, or a refusal, within a bounded time.

    python bench/bench_service_flood.py                    # rates 25, 50, 100 per service
    python bench/bench_service_flood.py --rates 50 --seconds 20 --json flood.json
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common as common  # noqa: E402


def flood(rate: float, seconds: float, drain: float, domain: int, args) -> dict:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from robo_reward_msgs.msg import StageSpec, TaskSpec
    from robo_reward_msgs.srv import SetTask, StartEpisode
    from sensor_msgs.msg import Image

    env = {**os.environ, "ROS_DOMAIN_ID": str(domain),
           "PYTHONPATH": HERE + os.pathsep + os.environ.get("PYTHONPATH", "")}
    log = tempfile.NamedTemporaryFile(prefix="flood-node-", suffix=".log", delete=False)
    node_process = subprocess.Popen(
        [args.reward_node, "--ros-args", "-p", 'model.preset:=""', "-p", "model.backend:=bench_sleep",
         "-p", "model.plugin_modules:=bench_sleep_backend", "-p", f'model.id:="{args.model_s}"',
         "-p", "inference.rate_hz:=10.0", "-p", "instruction:=stack the cups", "-p", "name_check_sec:=0.0",
         "-p", "episode_log.directory:=" + tempfile.mkdtemp(prefix="flood-logs-")],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    rclpy.init()
    node = rclpy.create_node("flood_caller")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    # A deep response queue here, so that a loss is the node's, not this caller's own queue's.
    deep = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)
    clients = {"start_episode": node.create_client(StartEpisode, "/reward_node/start_episode", qos_profile=deep),
               "set_task": node.create_client(SetTask, "/reward_node/set_task", qos_profile=deep)}
    camera = node.create_publisher(Image, "camera/image_raw", 10)
    try:
        deadline = time.monotonic() + 60
        while not all(c.service_is_ready() for c in clients.values()):
            if time.monotonic() > deadline or node_process.poll() is not None:
                raise RuntimeError(f"the node's services did not come up; log: {log.name}")
            executor.spin_once(timeout_sec=0.1)
        frame = Image(height=48, width=64, encoding="rgb8", step=64 * 3, data=bytes(48 * 64 * 3))
        sent = {name: [] for name in clients}  # (time sent, future)
        answered_at = {}

        def call(name, request):
            future = clients[name].call_async(request)
            key = (name, len(sent[name]))
            future.add_done_callback(lambda _, k=key: answered_at.setdefault(k, time.monotonic()))
            sent[name].append((time.monotonic(), future))
        start = time.monotonic()
        period = 1.0 / rate
        next_call, next_frame, count = start, start, 0
        while time.monotonic() < start + seconds:
            now = time.monotonic()
            if now >= next_frame:
                frame.header.stamp = node.get_clock().now().to_msg()
                camera.publish(frame)
                next_frame += 0.1
            while now >= next_call:
                count += 1
                call("start_episode", StartEpisode.Request(episode_id=f"flood-{count}", reason="flood"))
                task = TaskSpec(stages=[StageSpec(instruction=f"stack {count} cups")])
                call("set_task", SetTask.Request(task=task, start_episode=True))
                next_call += period
            executor.spin_once(timeout_sec=min(0.002, max(0.0, min(next_call, next_frame) - time.monotonic())))
        drain_end = time.monotonic() + drain
        while time.monotonic() < drain_end and len(answered_at) < sum(len(c) for c in sent.values()):
            executor.spin_once(timeout_sec=0.05)
        result = {}
        for name, calls in sent.items():
            served = refused = 0
            latencies, reasons = [], {}
            for i, (when, future) in enumerate(calls):
                if not future.done():
                    continue
                response = future.result()
                latencies.append(answered_at[(name, i)] - when)
                if response.success:
                    served += 1
                else:
                    refused += 1
                    reason = response.message.split(":")[0]
                    reasons[reason] = reasons.get(reason, 0) + 1
            result[name] = {"sent": len(calls), "served": served, "refused": refused,
                            "lost": len(calls) - served - refused, "refusals": reasons,
                            **common.summary_ms(latencies)}
        return result
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        common.stop_node_process(node_process, log)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", type=float, nargs="+", default=[25.0, 50.0, 100.0],
                        help="calls per second per service")
    parser.add_argument("--seconds", type=float, default=10.0, help="flood time per rate")
    parser.add_argument("--drain", type=float, default=30.0, help="wait for answers after the flood")
    parser.add_argument("--model-s", type=float, default=0.02, help="seconds per model step")
    parser.add_argument("--domain", type=int, default=91)
    parser.add_argument("--reward-node", default=None, help="reward_node executable (default: the installed one)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    args.reward_node = args.reward_node or shutil.which("reward_node")
    if not args.reward_node:
        print("reward_node is not installed: run `bash scripts/setup.sh` and `. scripts/env.sh` first")
        return 2
    rows, results = [], []
    for index, rate in enumerate(args.rates):
        outcome = flood(rate, args.seconds, args.drain, args.domain + index, args)
        for name, figures in outcome.items():
            results.append({"rate_per_service": rate, "service": name, **figures})
            rows.append([rate, name, figures["sent"], figures["served"], figures["refused"], figures["lost"],
                         figures["p50_ms"], figures["p95_ms"], figures["max_ms"]])
    print(common.table(["calls/s each", "service", "sent", "answered", "refused", "lost", "p50 ms",
                        "p95 ms", "max ms"], rows, digits=1))
    common.write_json(args.json, {"benchmark": "service_flood", "machine": common.machine(),
                                  "seconds": args.seconds, "drain": args.drain, "results": results})
    return 1 if any(r["lost"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
