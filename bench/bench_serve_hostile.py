# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A robot's valid requests to `robo-reward serve` while hostile peers load it (issue 30, findings 2 and 3).

Two bounded phases, each on a freshly started server hosting the tiny Robometer checkpoint (fp32, CPU):

- forged frames: 20 peers at once each send one request holding a ~700-byte JPEG cut after its
  header, which declares 4096x4096 pixels;
- slow clients: 24 peers each send a request's headers and one byte of its body, then nothing.

Meanwhile one robot scores 8-frame windows of 128x96 JPEG frames (each request waits 30 s at most)
and asks /info. Printed per phase: the robot's answered and failed requests, its latency, the
replica's peak memory (sampled RSS and the kernel's high-water mark), and what the peers got.
The phase ends when every peer has its answer or after --phase-seconds; then the server is killed.

    python bench/bench_serve_hostile.py [--phase-seconds 60] [--json bench/results/serve_hostile.json]

To measure an older checkout, run this file from inside it (copy it there): the server runs the
source tree the script sits in.
"""
import argparse
import base64
import http.client
import io
import json
import os
import sys
import tempfile
import threading
import time

from bench_common import PACKAGE_ROOT, machine, summary_ms, table, use_source_tree, write_json

use_source_tree()
sys.path.insert(0, os.path.join(PACKAGE_ROOT, "test"))

import numpy as np  # noqa: E402

from robo_reward_ros.models.reward_model import Frame  # noqa: E402
from robo_reward_ros.models.remote import wire  # noqa: E402

FORGED_PEERS = 20
SLOW_PEERS = 24
ROBOT_TIMEOUT_SEC = 30.0


def forged_jpeg(side: int = 4096) -> str:
    """Keep a JPEG's header and the first bytes of its scan, then end it: it declares side x side."""
    from PIL import Image
    buffer = io.BytesIO()
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (side, side, 3), dtype=np.uint8)).save(buffer, "JPEG", quality=50)
    return base64.b64encode(buffer.getvalue()[:700] + b"\xff\xd9").decode()


def robot_body(step: int) -> bytes:
    y, x = np.mgrid[0:96, 0:128]
    frames = []
    for i in range(step, step + 8):
        rgb = np.stack([x * 2, y * 2, np.full_like(x, 40)], axis=-1).astype(np.uint8)
        rgb[30:60, (8 + 5 * i) % 100:(8 + 5 * i) % 100 + 24] = (200, 30, 30)
        frames.append(Frame(0.2 * i, rgb))
    return json.dumps({"instruction": "pick up the cup", "clips": [wire.encode_clip(frames)]}).encode()


def post(port: int, path: str, body, timeout: float):
    """Return (status or the error's name, seconds)."""
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if body is None:
            connection.request("GET", path)
        else:
            connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status, time.perf_counter() - began
    except OSError as exc:
        return type(exc).__name__, time.perf_counter() - began
    finally:
        connection.close()


def replica_memory(root_pid: int):
    """(RSS, high-water mark) in MiB of the Serve replica below ``root_pid``; None before it exists."""
    import psutil
    for child in psutil.Process(root_pid).children(recursive=True):
        try:
            if not child.name().startswith("ray::ServeRepli"):
                continue
            with open(f"/proc/{child.pid}/status") as handle:
                status = dict(line.split(":", 1) for line in handle if ":" in line)
        except (OSError, psutil.Error):
            continue
        return (int(status["VmRSS"].split()[0]) / 1024.0, int(status["VmHWM"].split()[0]) / 1024.0)
    return None


class MemorySampler(threading.Thread):
    """The replica's largest RSS, sampled every 50 ms until stopped."""

    def __init__(self, root_pid: int) -> None:
        super().__init__(daemon=True)
        self.root_pid, self.peak, self.last = root_pid, 0.0, (0.0, 0.0)
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.05):
            memory = replica_memory(self.root_pid)
            if memory:
                self.peak, self.last = max(self.peak, memory[0]), memory


def slow_peer(port: int, hold_sec: float, outcomes: list) -> None:
    """Send headers and one byte of a 100 kB body, then wait for the server's answer or hold_sec."""
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=hold_sec)
    try:
        connection.putrequest("POST", "/score")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", "100000")
        connection.endheaders(b"{")
        response = connection.getresponse()
        outcomes.append((response.status, time.perf_counter() - began))
    except OSError as exc:
        outcomes.append((type(exc).__name__, time.perf_counter() - began))
    finally:
        connection.close()


def run_phase(name: str, model_dir: str, work: str, seconds: float):
    from reward_server_process import RewardServerProcess
    server = RewardServerProcess(model_dir, work)
    server.start()
    root = server.process.popen.pid
    try:
        for step in range(3):  # warm-up: first forward, caches
            post(server.port, "/score", robot_body(step), ROBOT_TIMEOUT_SEC)
        idle = replica_memory(root)
        peers, outcomes = [], []
        if name == "forged frames":
            body = json.dumps({"instruction": "pick up the cup",
                               "clips": [[{"stamp": 0.0, "jpeg": forged_jpeg()}]]}).encode()
            print(f"forged request: {len(body)} bytes")
            for _ in range(FORGED_PEERS):
                peers.append(threading.Thread(
                    target=lambda: outcomes.append(post(server.port, "/score", body, seconds)), daemon=True))
        else:
            for _ in range(SLOW_PEERS):
                peers.append(threading.Thread(target=slow_peer, args=(server.port, seconds, outcomes), daemon=True))
        sampler = MemorySampler(root)
        sampler.start()
        began = time.perf_counter()
        for peer in peers:
            peer.start()
        robot, info, step = [], [], 3
        while time.perf_counter() - began < seconds and any(peer.is_alive() for peer in peers):
            robot.append(post(server.port, "/score", robot_body(step), ROBOT_TIMEOUT_SEC))
            info.append(post(server.port, "/info", None, 10.0))
            step += 1
        if not robot:  # the peers were all answered before the robot's first request: one after them
            robot.append(post(server.port, "/score", robot_body(step), ROBOT_TIMEOUT_SEC))
        elapsed = time.perf_counter() - began
        sampler.stopped.set()
        sampler.join()
    finally:
        server.kill()
    answered = [seconds_ for status, seconds_ in robot if status == 200]
    peer_statuses = {}
    for status, _ in outcomes:
        peer_statuses[str(status)] = peer_statuses.get(str(status), 0) + 1
    unanswered = len(peers) - len(outcomes)
    if unanswered:
        peer_statuses["no answer by the phase's end"] = unanswered
    return {"phase": name, "seconds": elapsed, "robot_requests": len(robot), "robot_answered": len(answered),
            "robot_failed": len(robot) - len(answered), **{f"robot_{k}": v for k, v in summary_ms(answered).items()},
            "info_answered": sum(1 for status, _ in info if status == 200), "info_requests": len(info),
            "replica_idle_rss_mib": idle[0] if idle else None, "replica_peak_rss_mib": sampler.peak,
            "replica_high_water_mib": sampler.last[1], "peers": peer_statuses}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase-seconds", type=float, default=60.0, help="longest a phase runs")
    parser.add_argument("--label", default="this checkout", help="what the figures are of (before, after, ...)")
    parser.add_argument("--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "results", "serve_hostile.json"))
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")  # the server too
    from robo_reward_ros.models.testing.tiny_checkpoints import build_robometer
    work = tempfile.mkdtemp(prefix="bench_serve_hostile_")
    model_dir = build_robometer(os.path.join(work, "robometer"))
    results = [run_phase(name, model_dir, work, args.phase_seconds) for name in ("forged frames", "slow clients")]
    print(f"robo-reward serve ({args.label}), tiny Robometer (fp32, CPU); a robot's 8-frame windows of 128x96 "
          f"JPEG frames under {FORGED_PEERS} forged-frame peers, then {SLOW_PEERS} slow clients")
    print(table(["phase", "s", "robot ok", "robot failed", "p50 ms", "max ms", "/info ok", "replica idle MiB",
                 "replica peak MiB", "high-water MiB", "peers got"],
                [[r["phase"], r["seconds"], r["robot_answered"], r["robot_failed"], r["robot_p50_ms"],
                  r["robot_max_ms"], f"{r['info_answered']}/{r['info_requests']}", r["replica_idle_rss_mib"],
                  r["replica_peak_rss_mib"], r["replica_high_water_mib"],
                  ", ".join(f"{k}: {v}" for k, v in r["peers"].items())] for r in results]))
    write_json(args.json, {"machine": machine(), "label": args.label, "phase_seconds": args.phase_seconds,
                           "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
