# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Throughput and latency of `robo-reward serve` with 1, 2 and 4 concurrent robots, batched vs not.

Each client is the node's own remote backend (models/backends/remote.py) on a thread, scoring a
sliding 8-frame window of its own camera-like frames (one new frame per request, as a node does)
with its own instruction. The server hosts the tiny Robometer checkpoint on the CPU, started once
with --max-batch 8 (batched: the robots' windows share one forward) and once with --max-batch 1.

    python bench/bench_serve.py [--seconds 8] [--json bench/results/serve.json]
"""
import argparse
import os
import sys
import tempfile
import threading
import time

from bench_common import machine, summary_ms, table, use_source_tree, write_json

use_source_tree()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robo_reward_ros", "test"))

import numpy as np  # noqa: E402

from robo_reward_ros.models.backends.remote import RemoteRewardModel  # noqa: E402
from robo_reward_ros.models.reward_model import Frame  # noqa: E402

CLIENTS = (1, 2, 4)


def camera_frames(seed: int, count: int):
    """Smooth 128x96 frames with a moving block, different per robot."""
    y, x = np.mgrid[0:96, 0:128]
    frames = []
    for step in range(count):
        rgb = np.stack([x * 2, y * 2, np.full_like(x, 40 * seed)], axis=-1).astype(np.uint8)
        left = (8 + 5 * step + 17 * seed) % 100
        rgb[30:60, left:left + 24] = (200, 30, 30)
        frames.append(Frame(stamp=0.2 * step, rgb=rgb))
    return frames


def run_clients(url: str, clients: int, seconds: float):
    latencies = [[] for _ in range(clients)]
    models = [RemoteRewardModel(url, timeout_sec=60.0) for _ in range(clients)]
    frames = [camera_frames(i + 1, 400) for i in range(clients)]
    for index, model in enumerate(models):  # warm-up: first forward, caches
        model.score(f"task {index}", frames[index][:8])
    start = threading.Barrier(clients + 1)
    stop_at = []

    def client(index: int) -> None:
        start.wait()
        step = 1
        while time.perf_counter() < stop_at[0]:
            began = time.perf_counter()
            models[index].score(f"task {index}", frames[index][step:step + 8])
            latencies[index].append(time.perf_counter() - began)
            step = (step + 1) % (len(frames[index]) - 8)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    stop_at.append(began + seconds)
    start.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    flat = [v for per in latencies for v in per]
    return {"clients": clients, "requests": len(flat), "seconds": elapsed,
            "requests_per_s": len(flat) / elapsed, **summary_ms(flat)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="measured time per client count")
    parser.add_argument("--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "results", "serve.json"))
    args = parser.parse_args()
    from reward_server_process import RewardServerProcess
    from robo_reward_ros.models.testing.tiny_checkpoints import build_robometer
    work = tempfile.mkdtemp(prefix="bench_serve_")
    model_dir = build_robometer(os.path.join(work, "robometer"))
    results = {}
    for mode, max_batch in (("batched", 8), ("unbatched", 1)):
        server = RewardServerProcess(model_dir, work, extra_args=("--max-batch", str(max_batch)))
        server.start()
        try:
            results[mode] = [run_clients(server.url, n, args.seconds) for n in CLIENTS]
        finally:
            server.kill()
    rows = []
    for index, clients in enumerate(CLIENTS):
        batched, unbatched = results["batched"][index], results["unbatched"][index]
        rows.append([clients, batched["requests_per_s"], batched["p50_ms"], batched["p95_ms"],
                     unbatched["requests_per_s"], unbatched["p50_ms"], unbatched["p95_ms"],
                     batched["requests_per_s"] / unbatched["requests_per_s"]])
    print("robo-reward serve, tiny Robometer (fp32, CPU), 8-frame windows of 128x96 JPEG frames")
    print(table(["clients", "batched req/s", "p50 ms", "p95 ms", "unbatched req/s", "p50 ms", "p95 ms",
                 "ratio req/s"], rows))
    write_json(args.json, {"machine": machine(), "seconds_per_level": args.seconds, "results": results,
                           "ratio_batched_over_unbatched": {str(r[0]): r[7] for r in rows}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
