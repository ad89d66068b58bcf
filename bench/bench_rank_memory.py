# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: peak memory of ``robo-reward rank`` on synthetic LeRobot v3 datasets of growing size.

Writes one dataset per ``--episodes`` value (``--frames`` frames of ``--size`` each per episode,
H.264, the test suite's writer: test/lerobot_datasets.py), then ranks each in a fresh process with
the model (default: the tiny random Robometer checkpoint, ``--model tiny-random``) and prints the
child's peak RSS (ru_maxrss), the time and the rows written. Ranking streams episodes one at a
time, so the peak should not grow with the dataset.

    python bench/bench_rank_memory.py --episodes 100 1000 [--json bench/results/rank_memory.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TEST_DIR = os.path.join(ROOT, "robo_reward_ros", "test")

CHILD = r"""
import json, resource, sys, time
from robo_reward_ros.replay.rank_run import run_rank
started = time.monotonic()
summary = run_rank([sys.argv[1]], sys.argv[2], model=sys.argv[3], progress_bar=False, log=lambda _: None)
print(json.dumps({"seconds": time.monotonic() - started, "rows": summary["rows"],
                  "errors": len(summary["errors"]),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def write_dataset(root: str, episodes: int, frames: int, size) -> str:
    """Write ``episodes`` episodes of two alternating tasks, progress ramps painted in the frames."""
    sys.path.insert(0, TEST_DIR)
    from lerobot_datasets import write_v3_dataset
    values = [("open the drawer" if k % 2 else "close the drawer",
               [(((k % 10) / 10.0) * i / (frames - 1), 0.1) for i in range(frames)]) for k in range(episodes)]
    return write_v3_dataset(root, values, keys=("observation.images.top",), size=size)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--height", type=int, default=48)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--model", default="tiny-random")
    parser.add_argument("--json", default="", help="also write the results here")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="rank_memory_") as work:
        for count in args.episodes:
            dataset = write_dataset(os.path.join(work, f"ds{count}"), count, args.frames, (args.height, args.width))
            size_mb = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(dataset)
                          for f in files) / 1e6
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-c", CHILD, dataset, os.path.join(work, f"r{count}.parquet"),
                                   args.model], capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result.update(episodes=count, frames=count * args.frames, dataset_mb=round(size_mb, 1),
                          decoded_mb=round(count * args.frames * args.height * args.width * 3 / 1e6, 1),
                          wall_seconds=round(time.monotonic() - started, 1))
            results.append(result)
            print(f"{count:>5} episodes ({result['frames']} frames, {result['dataset_mb']} MB on disk, "
                  f"{result['decoded_mb']} MB decoded): peak RSS {result['peak_rss_mb']:.0f} MB, "
                  f"{result['seconds']:.0f} s ranking, {result['rows']} rows, {result['errors']} errors")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"model": args.model, "results": results}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
