# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: peak memory of ``robo-reward replay`` on a long robot recording vs a short one.

Writes rosbag2 recordings (rosbags writer, MCAP) of one camera at ``--fps`` and ``--size``, as
``sensor_msgs/CompressedImage`` JPEG ("rgb8; jpeg compressed bgr8", what image_transport
records) or raw ``sensor_msgs/Image`` rgb8 (``--raw``), one per ``--minutes`` value, then
replays each in a fresh process with the node's parameters and the model (default: the demo's
tiny Robometer checkpoint) and prints the child's peak RSS (ru_maxrss), the bag size and the
time. Streaming replay keeps the frame window, not the bag: the peaks should match.

    python bench/bench_recording_memory.py --minutes 1 10 -p timeout.episode_sec=0 \
        --json bench/results/recording_memory.json
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as common  # noqa: E402

DISTINCT_FRAMES = 120  # frames are cycled: content does not change what is held in memory

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from robo_reward_ros.recordings.robot_recording import RecordingOptions
from robo_reward_ros.replay.replay_run import run_replay
started = time.monotonic()
summary = run_replay([sys.argv[2]], sys.argv[3], model=sys.argv[4], params=json.loads(sys.argv[5]),
                     reading=RecordingOptions(camera_topics=("/camera/color/image_raw/compressed"
                                                             if sys.argv[6] == "jpeg" else
                                                             "/camera/color/image_raw",),
                                              instruction="pick up the cup"),
                     plots=False, progress_bar=False, log=lambda *a: None)
print(json.dumps({"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  "seconds": time.monotonic() - started, "estimates": summary["estimates"],
                  "errors": summary["errors"]}))
"""


def textured_frames(size, count, seed=0):
    """Make textured frames (noise upscaled plus a moving bar): JPEGs of a realistic size."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    height, width = size
    out = []
    for index in range(count):
        small = rng.integers(0, 256, (height // 16, width // 16, 3), dtype=np.uint8)
        image = np.asarray(Image.fromarray(small).resize((width, height), Image.BILINEAR)).copy()
        column = (index * 7) % width
        image[:, column:column + 20] = 255
        out.append(image)
    return out


def write_bag(path, minutes, fps, size, raw):
    from PIL import Image
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_KILTED)
    types = store.types
    msgtype = "sensor_msgs/msg/Image" if raw else "sensor_msgs/msg/CompressedImage"
    topic = "/camera/color/image_raw" if raw else "/camera/color/image_raw/compressed"
    payloads = []
    for rgb in textured_frames(size, DISTINCT_FRAMES):
        if raw:
            payloads.append(np.frombuffer(rgb.tobytes(), dtype=np.uint8))
        else:
            buffer = io.BytesIO()
            Image.fromarray(rgb).save(buffer, format="JPEG", quality=90)
            payloads.append(np.frombuffer(buffer.getvalue(), dtype=np.uint8))
    base = 1_750_000_000 * 10**9
    count = int(minutes * 60 * fps)
    with Writer(path, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection(topic, msgtype, typestore=store)
        for index in range(count):
            stamp = base + int(round(index * 1e9 / fps))
            header = types["std_msgs/msg/Header"](
                stamp=types["builtin_interfaces/msg/Time"](sec=stamp // 10**9, nanosec=stamp % 10**9),
                frame_id="camera_color_optical_frame")
            data = payloads[index % len(payloads)]
            if raw:
                msg = types[msgtype](header=header, height=size[0], width=size[1], encoding="rgb8",
                                     is_bigendian=0, step=size[1] * 3, data=data)
            else:
                msg = types[msgtype](header=header, format="rgb8; jpeg compressed bgr8", data=data)
            writer.write(conn, stamp, store.serialize_cdr(msg, msgtype))
    return count


def folder_size_mb(path):
    return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path)) / 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, nargs="+", default=[1.0, 10.0])
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--size", type=int, nargs=2, default=[480, 640], metavar=("HEIGHT", "WIDTH"))
    parser.add_argument("--raw", action="store_true", help="raw rgb8 Image instead of JPEG CompressedImage")
    parser.add_argument("--model", default="", help="checkpoint (default: the demo's tiny Robometer)")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--work", help="folder for the bags (default: a temporary one, removed)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    common.use_source_tree()
    source = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robo_reward_ros")
    if not args.model:
        from robo_reward_ros.simulation.demo_assets import demo_checkpoint
        args.model = demo_checkpoint(print)
    rows, results = [], []
    with tempfile.TemporaryDirectory(dir=args.work) as work:
        for minutes in args.minutes:
            bag = os.path.join(work, f"rec_{minutes:g}min")
            started = time.monotonic()
            count = write_bag(bag, minutes, args.fps, tuple(args.size), args.raw)
            written = time.monotonic() - started
            child = subprocess.run(
                [sys.executable, "-c", CHILD, source, bag, os.path.join(work, f"out_{minutes:g}"),
                 args.model, json.dumps(args.param), "raw" if args.raw else "jpeg"],
                capture_output=True, text=True)
            if child.returncode != 0:
                print(child.stderr, file=sys.stderr)
                return 1
            result = json.loads(child.stdout.strip().splitlines()[-1])
            result.update(minutes=minutes, frames=count, bag_mb=folder_size_mb(bag), write_seconds=written,
                          frames_per_second=count / result["seconds"])
            results.append(result)
            rows.append([f"{minutes:g}", count, result["bag_mb"], result["peak_rss_mb"], result["seconds"],
                         result["frames_per_second"], result["estimates"]])
            print(f"{minutes:g} min: {count} frames, bag {result['bag_mb']:.0f} MB, peak RSS "
                  f"{result['peak_rss_mb']:.0f} MB, {result['seconds']:.0f} s", flush=True)
    print(common.table(["minutes", "frames", "bag MB", "peak RSS MB", "replay s", "frames/s", "estimates"],
                       rows, 1))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"fps": args.fps, "size": args.size, "raw": args.raw, "model": args.model,
                       "params": args.param, "results": results}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
