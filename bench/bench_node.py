# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Benchmark 2: the installed reward_node under camera load, with a model of a set time per step.

Three processes: the reward node (backend ``bench_sleep`` from bench/bench_sleep_backend.py: each
step takes ``--model-s`` seconds), a camera publisher (``sensor_msgs/Image`` rgb8 at ``--hz``,
stamped with the wall clock at publish time), and this process, which receives the estimates and
/diagnostics (and, as a transport probe, the camera topic itself). Per case:

- frames sent (publisher) vs received at the node (/diagnostics ``frames_received``);
- estimate rate vs the expected min(inference.rate_hz, 1/model time);
- image->estimate latency minus model time (``overhead``), p50/p95/max, split into the age of the
  newest frame when the model starts (transport + decode + window + the wait for the next
  inference tick, which latest-wins sampling bounds by one camera period) and the time from the
  model's end to the estimate's arrival here (monitor, message, DDS); plus the camera transport
  latency the probe subscriber sees;
- CPU% of the node process while the camera runs.

Transports: ``default`` (Fast DDS as configured by the environment) and ``shm`` (the recommended
setting: the Fast DDS profile robo_reward_ros/config/fastdds_shm.xml, shared memory with segments
sized for the frames). DDS stays on localhost with a ROS_DOMAIN_ID of its own.

    python bench/bench_node.py --json node.json                       # the default case matrix
    python bench/bench_node.py --sizes 640x480 --transports shm --seconds 10
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common as common  # noqa: E402
from robo_reward_ros.core.stamps import to_seconds  # noqa: E402

CAMERA_TOPIC = "camera/image_raw"
INSTRUCTION = "put the green stick in the brown bowl"
# Recommended transport for big images on one machine (docs/performance.md): a Fast DDS profile
# with shared memory only and segments sized for 1280x720 rgb8 frames (robo_reward_ros/config/fastdds_shm.xml).
# The environment-variable form (FASTDDS_BUILTIN_TRANSPORTS=SHM?...) did not help here: best-effort
# 640x480 frames were still lost (3 of 150 arrived).
SHM_PROFILE = os.path.join(common.REPO, "robo_reward_ros", "config", "fastdds_shm.xml")


def transport_env(name: str) -> dict:
    env = dict(os.environ)
    env.pop("FASTDDS_BUILTIN_TRANSPORTS", None)
    env.pop("FASTDDS_DEFAULT_PROFILES_FILE", None)
    if name == "shm":
        env["FASTDDS_DEFAULT_PROFILES_FILE"] = SHM_PROFILE
    elif name == "shm_env":
        env["FASTDDS_BUILTIN_TRANSPORTS"] = "SHM?max_msg_size=4MB&sockets_size=16MB"
    return env


def transport_setting(name: str) -> str:
    env = transport_env(name)
    for key in ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTDDS_BUILTIN_TRANSPORTS"):
        if key in env:
            return f"{key}={os.path.relpath(env[key]) if key.endswith('FILE') else env[key]}"
    return "(Fast DDS defaults: UDPv4 + SHM 512 KB segments)"


# -- the camera publisher (its own process) -------------------------------------------------------
def publisher(args) -> int:
    import numpy as np
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image
    rclpy.init()
    node = rclpy.create_node("bench_camera")
    pub = node.create_publisher(Image, CAMERA_TOPIC, qos_profile_sensor_data)
    width, height = args.width, args.height
    rng = np.random.default_rng(0)
    base = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    payloads = [bytes(np.roll(base, k, axis=1)) for k in range(4)]  # a few distinct frames, as bytes
    deadline = time.monotonic() + 30.0
    while pub.get_subscription_count() < args.min_subscribers and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(args.settle)  # the other side matches us a little after we match it
    print("START " + json.dumps({"subscribers": pub.get_subscription_count(), "t": time.time()}), flush=True)
    period = 1.0 / args.hz
    count = int(args.seconds * args.hz)
    next_at = time.monotonic()
    late = 0
    for k in range(count):
        msg = Image()
        now = time.time()
        msg.header.stamp.sec = int(now)
        msg.header.stamp.nanosec = int((now - int(now)) * 1e9)
        msg.header.frame_id = "camera"
        msg.height, msg.width, msg.encoding, msg.is_bigendian, msg.step = height, width, "rgb8", 0, width * 3
        msg.data = payloads[k % len(payloads)]
        pub.publish(msg)
        next_at += period
        wait = next_at - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        else:
            late += 1
    print("STOP " + json.dumps({"sent": count, "late": late, "t": time.time()}), flush=True)
    time.sleep(0.5)
    node.destroy_node()
    rclpy.shutdown()
    return 0


# -- one case ---------------------------------------------------------------------------------------
class Listener:
    """Estimates, camera-probe receipts and the node's camera diagnostics, on a spinning thread."""

    def __init__(self, probe: bool, overlay: bool = False):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
        from robo_reward_msgs.msg import RewardEstimate
        from sensor_msgs.msg import Image
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("bench_listener", context=self.context)
        self.estimates, self.probe, self.camera_diag, self.overlays = [], [], {}, []
        self.node.create_subscription(RewardEstimate, "reward", self._on_estimate,
                                      QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE))
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diag, 10)
        if probe:
            self.node.create_subscription(Image, CAMERA_TOPIC, self._on_image, qos_profile_sensor_data)
        if overlay:  # someone watching: the overlay draws only for subscribers
            self.node.create_subscription(Image, "overlay/image_raw",
                                          lambda _: self.overlays.append(time.time()), 1)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = False
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        while not self._stop and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def _on_estimate(self, msg):
        self.estimates.append((time.time(), to_seconds(msg.header.stamp),
                               msg.inference_latency_sec))

    def _on_image(self, msg):
        self.probe.append(time.time() - to_seconds(msg.header.stamp))

    def _on_diag(self, msg):
        for status in msg.status:
            if ": camera " in status.name:
                self.camera_diag = {kv.key: kv.value for kv in status.values}

    def close(self):
        import rclpy
        self._stop = True
        self.thread.join(timeout=2.0)
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def run_case(case, args, domain_id, workdir) -> dict:
    env = transport_env(case["transport"])
    env.update({"ROS_DOMAIN_ID": str(domain_id), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
                "ROS_LOG_DIR": os.path.join(workdir, "ros-log"), "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": HERE + os.pathsep + os.environ.get("PYTHONPATH", "")})
    log_path = os.path.join(workdir, f"sleep-{domain_id}.jsonl")
    node_env = dict(env, BENCH_SLEEP_LOG=log_path)
    if args.node_pythonpath:  # e.g. a scratch copy of the package with a proposed change
        node_env["PYTHONPATH"] = args.node_pythonpath + os.pathsep + node_env["PYTHONPATH"]
    node_argv = [args.reward_node, "--ros-args",
                 "-p", 'model.preset:=""', "-p", "model.backend:=bench_sleep",
                 "-p", "model.plugin_modules:=bench_sleep_backend", "-p", f'model.id:="{case["model_s"]}"',
                 "-p", "model.precision:=fp32", "-p", "model.device:=cpu",
                 "-p", f"instruction:={INSTRUCTION}", "-p", f"inference.rate_hz:={case['rate_hz']}",
                 "-p", "timeout.episode_sec:=0.0", "-p", 'episode_log.directory:=""',
                 "-p", f"cameras.topics:=[{CAMERA_TOPIC}]", "-p", f"cameras.qos.depth:={args.depth}"]
    # This process's own rclpy must see the same domain (the transport came with its environment).
    os.environ["ROS_DOMAIN_ID"] = str(domain_id)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    node_out = open(os.path.join(workdir, f"node-{domain_id}.log"), "w")
    node = subprocess.Popen(node_argv, env=node_env, stdout=node_out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    overlay = None
    if args.overlay_hz > 0:  # the operator overlay beside the node, on the same camera
        overlay_argv = [os.path.join(os.path.dirname(args.reward_node), "operator_overlay"), "--ros-args",
                        "-p", f"camera_topic:={CAMERA_TOPIC}", "-p", f"rate_hz:={args.overlay_hz}"]
        overlay = subprocess.Popen(overlay_argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    listener = None
    pub = None
    try:
        listener = Listener(probe=args.probe, overlay=overlay is not None)
        # Wait until the node is scoring-ready: its diagnostics name the camera.
        deadline = time.monotonic() + 60.0
        while "frames_received" not in listener.camera_diag and time.monotonic() < deadline:
            if node.poll() is not None:
                raise RuntimeError(f"reward_node exited with {node.returncode}")
            time.sleep(0.1)
        if "frames_received" not in listener.camera_diag:
            raise RuntimeError("the node published no camera diagnostics within 60 s")
        pub_argv = [sys.executable, os.path.abspath(__file__), "--publisher", "--width", str(case["width"]),
                    "--height", str(case["height"]), "--hz", str(args.hz), "--seconds", str(args.seconds),
                    "--min-subscribers", str((2 if args.probe else 1) + (1 if overlay else 0))]
        pub = subprocess.Popen(pub_argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        start_line = pub.stdout.readline()
        if not start_line.startswith("START"):
            raise RuntimeError(f"publisher did not start: {start_line!r} {pub.stderr.read()[-2000:]}")
        received_before = int(listener.camera_diag.get("frames_received", "0") or 0)
        time.sleep(args.warmup)
        t0, cpu0 = time.time(), common.cpu_seconds(node.pid)
        rss_samples = []
        stop_line = ""
        while True:
            line = pub.stdout.readline()
            if line.startswith("STOP") or not line:
                stop_line = line
                break
        t1, cpu1 = time.time(), common.cpu_seconds(node.pid)
        rss_samples.append(common.rss_kb(node.pid) / 1024)
        pub.wait(timeout=10)
        stop = json.loads(stop_line[5:]) if stop_line.startswith("STOP") else {"sent": None, "late": None}
        time.sleep(args.diag_wait)  # a diagnostics report after the last frame
        diag = dict(listener.camera_diag)
    finally:
        if pub is not None and pub.poll() is None:
            pub.kill()
        if overlay is not None and overlay.poll() is None:
            os.killpg(overlay.pid, signal.SIGINT)
            overlay.wait(timeout=10)
        if node.poll() is None:
            os.killpg(node.pid, signal.SIGINT)
            try:
                node.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()
        node_out.close()
        estimates = list(listener.estimates) if listener else []
        overlays = list(listener.overlays) if listener else []
        probe = list(listener.probe) if listener else []
        if listener is not None:
            listener.close()
    node_log = open(os.path.join(workdir, f"node-{domain_id}.log")).read()
    calls = []
    if os.path.isfile(log_path):
        with open(log_path) as handle:
            calls = [json.loads(line) for line in handle if line.strip()]
    by_stamp = {round(c["stamp"], 6): c for c in calls}
    window = [e for e in estimates if t0 <= e[0] <= t1]
    overhead = [recv - stamp - latency for recv, stamp, latency in window]
    pre, post, model = [], [], []
    for recv, stamp, latency in window:
        call = by_stamp.get(round(stamp, 6))
        if call is not None:
            pre.append(call["start"] - stamp)
            post.append(recv - call["end"])
            model.append(latency)
    sent = stop.get("sent")
    received = int(diag.get("frames_received", "0") or 0) - received_before
    expected_rate = min(case["rate_hz"], 1.0 / case["model_s"]) if case["model_s"] > 0 else case["rate_hz"]
    rate = len(window) / (t1 - t0) if t1 > t0 else 0.0
    return {
        **case, "hz": args.hz, "seconds": args.seconds, "overlay_hz": args.overlay_hz, "sent": sent,
        "publisher_late": stop.get("late"), "overlays_received": len([t for t in overlays if t0 <= t <= t1]),
        "received_at_node": received, "lost": (sent - received) if sent is not None else None,
        "node_frames_lost_in_transport": diag.get("frames_lost_in_transport"),
        "node_frames_rejected": diag.get("frames_rejected"), "node_input_rate_hz": diag.get("input_rate_hz"),
        "estimates": len(window), "estimate_rate_hz": rate, "expected_rate_hz": expected_rate,
        "rate_ratio": rate / expected_rate if expected_rate else None,
        "overhead": common.summary_ms(overhead), "pre_model_age": common.summary_ms(pre),
        "post_model": common.summary_ms(post), "model": common.summary_ms(model),
        "camera_transport_probe": common.summary_ms(probe[len(probe) // 10:]), "probe_received": len(probe),
        "node_cpu_pct": 100.0 * (cpu1 - cpu0) / (t1 - t0) if t1 > t0 else None,
        "node_rss_mb": rss_samples[-1] if rss_samples else None,
        "transport_setting": transport_setting(case["transport"]),
        "diagnostics": diag, "node_log_tail": node_log[-1500:],
    }


def parse_size(text):
    width, height = text.lower().split("x")
    return int(width), int(height)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["640x480", "1280x720"])
    parser.add_argument("--transports", nargs="+", default=["default", "shm"],
                        choices=("default", "shm", "shm_env"))
    parser.add_argument("--models", nargs="+", type=float, default=[0.1],
                        help="model seconds per step (each with --rate-hz)")
    parser.add_argument("--rate-hz", type=float, default=5.0, help="inference.rate_hz")
    parser.add_argument("--extra-slow", type=float, default=0.4,
                        help="also run one case (shm, first size) whose model is slower than the rate (0: none)")
    parser.add_argument("--hz", type=float, default=30.0, help="camera rate")
    parser.add_argument("--depth", type=int, default=1, help="cameras.qos.depth of the node")
    parser.add_argument("--seconds", type=float, default=15.0, help="camera stream length per case")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of camera before measuring")
    parser.add_argument("--diag-wait", type=float, default=2.5)
    parser.add_argument("--no-probe", dest="probe", action="store_false",
                        help="no camera-transport probe subscriber in this process")
    parser.add_argument("--reward-node", default=None, help="reward_node executable (default: the installed one)")
    parser.add_argument("--domain-id", type=int, default=0, help="first ROS_DOMAIN_ID (default: from the pid)")
    parser.add_argument("--node-pythonpath", default="",
                        help="put this first on the node's PYTHONPATH (a patched copy of robo_reward_ros)")
    parser.add_argument("--overlay-hz", type=float, default=0.0,
                        help="also run operator_overlay on the camera at this rate (0: not)")
    parser.add_argument("--json", help="write the results here")
    # publisher role
    parser.add_argument("--publisher", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--width", type=int, default=640, help=argparse.SUPPRESS)
    parser.add_argument("--height", type=int, default=480, help=argparse.SUPPRESS)
    parser.add_argument("--min-subscribers", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--settle", type=float, default=1.0, help=argparse.SUPPRESS)
    parser.add_argument("--run-case", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.publisher:
        return publisher(args)
    if args.run_case:
        case = json.loads(args.run_case)
        try:
            result = run_case(case, args, args.domain_id, args.workdir)
        except Exception as exc:  # reported by the parent, which goes on with the next case
            result = {**case, "error": f"{type(exc).__name__}: {exc}"}
            log = os.path.join(args.workdir, f"node-{args.domain_id}.log")
            if os.path.isfile(log):
                result["node_log_tail"] = open(log).read()[-2000:]
        print("RESULT " + json.dumps(result, default=str), flush=True)
        return 0
    import shutil
    args.reward_node = args.reward_node or shutil.which("reward_node")
    if not args.reward_node:
        print("reward_node is not installed: run `bash scripts/setup.sh` and `. scripts/env.sh` first")
        return 2
    cases = []
    for size in args.sizes:
        width, height = parse_size(size)
        for transport in args.transports:
            for model_s in args.models:
                cases.append({"width": width, "height": height, "transport": transport, "model_s": model_s,
                              "rate_hz": args.rate_hz})
    if args.extra_slow > 0:
        width, height = parse_size(args.sizes[0])
        cases.append({"width": width, "height": height, "transport": args.transports[-1],
                      "model_s": args.extra_slow, "rate_hz": args.rate_hz})
    base_domain = args.domain_id or (120 + os.getpid() % 80)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-node-") as workdir:
        for index, case in enumerate(cases):
            print(f"# {case['width']}x{case['height']} {case['transport']} model {case['model_s']} s "
                  f"rate {case['rate_hz']} Hz ...", flush=True)
            # Each case in its own process: Fast DDS reads its profile once per process.
            child = [sys.executable, os.path.abspath(__file__), "--run-case", json.dumps(case),
                     "--domain-id", str(base_domain + index), "--workdir", workdir,
                     "--hz", str(args.hz), "--seconds", str(args.seconds), "--warmup", str(args.warmup),
                     "--diag-wait", str(args.diag_wait), "--depth", str(args.depth),
                     "--reward-node", args.reward_node, "--node-pythonpath", args.node_pythonpath,
                     "--overlay-hz", str(args.overlay_hz)] + ([] if args.probe else ["--no-probe"])
            proc = subprocess.run(child, env=transport_env(case["transport"]), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, timeout=args.seconds + 180)
            lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
            if lines:
                result = json.loads(lines[-1][len("RESULT "):])
            else:
                result = {**case, "error": f"case process exited {proc.returncode}: {proc.stderr[-1500:]}"}
            if "error" in result:
                print(f"#   failed: {result['error']}", flush=True)
            else:
                print(f"#   sent {result['sent']}, received {result['received_at_node']}, "
                      f"{result['estimate_rate_hz']:.2f} estimates/s, overhead p95 {result['overhead']['p95_ms']} ms",
                      flush=True)
            results.append(result)
    rows = []
    for r in results:
        if "error" in r:
            rows.append([f"{r['width']}x{r['height']}", r["transport"], r["model_s"], r["rate_hz"], "error"]
                        + [""] * 10)
            continue
        rows.append([f"{r['width']}x{r['height']}", r["transport"], r["model_s"], r["rate_hz"], r["sent"],
                     r["received_at_node"], r["lost"], r["estimate_rate_hz"], r["expected_rate_hz"],
                     r["overhead"]["p50_ms"], r["overhead"]["p95_ms"], r["overhead"]["max_ms"],
                     r["post_model"]["p95_ms"], r["camera_transport_probe"]["p95_ms"], r["node_cpu_pct"]])
    print(common.table(["camera", "transport", "model s", "rate Hz", "sent", "received", "lost", "est/s",
                        "expected/s", "overhead p50 ms", "p95 ms", "max ms", "post-model p95 ms",
                        "transport p95 ms", "node CPU %"], rows))
    common.write_json(args.json, {"benchmark": "node_load", "machine": common.machine(), "results": results,
                                  "shm_profile": os.path.relpath(SHM_PROFILE, common.REPO)})
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
