# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Benchmark 3: memory over a simulated hour of streaming (window + task monitor + tiny model).

Frames with stamps advancing faster than wall time (``--fps`` frames per simulated second, each a
distinct 224x224 image) go through the ROS-free ``RewardPipeline`` (per-camera stage window,
latest-wins scoring by a tiny Robometer checkpoint with its vision feature cache, task monitor),
which is what the node runs. A step is scored every ``1/--rate-hz`` simulated seconds. Resident
memory (RSS) is sampled every ``--sample-every`` simulated seconds, with the window's frame count
and the feature cache's size. Target: RSS flat within 5% after the warm-up, window bounded by
``--max-frames``.

    python bench/bench_memory.py --sim-seconds 3600 --json memory.json
"""
import argparse
import gc
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as common  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sim-seconds", type=float, default=3600.0, help="simulated stream length")
    parser.add_argument("--fps", type=float, default=30.0, help="camera frames per simulated second")
    parser.add_argument("--rate-hz", type=float, default=0.5,
                        help="reward steps per simulated second (the node default is 2; 0.5 keeps an hour ~2 min)")
    parser.add_argument("--max-frames", type=int, default=32, help="window.max_frames")
    parser.add_argument("--min-interval", type=float, default=0.1, help="window.min_interval_sec")
    parser.add_argument("--sample-every", type=float, default=60.0, help="simulated seconds between RSS samples")
    parser.add_argument("--warmup-fraction", type=float, default=0.1,
                        help="part of the stream before the reference RSS sample")
    parser.add_argument("--frame", type=int, default=224)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    common.use_source_tree()
    import torch
    from robo_reward_ros.core.frame import Frame
    from robo_reward_ros.core.reward_pipeline import RewardPipeline, WindowConfig
    from robo_reward_ros.core.monitor_config import MonitorConfig
    from robo_reward_ros.core.task_monitor import TaskMonitor
    from robo_reward_ros.core.task_spec import build_task
    from robo_reward_ros.models import load_reward_model
    from robo_reward_ros.models.testing.tiny_checkpoints import build_robometer

    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        path = build_robometer(os.path.join(tmp, "robometer"))
        model = load_reward_model(path, backend="robometer", precision="fp32", device="cpu")
        # No time limits and no terminal failures: one hour-long episode (restarted if it ever ends).
        config = MonitorConfig(episode_timeout_s=None, stage_timeout_s=None)
        pipeline = RewardPipeline(model, TaskMonitor(config), ["front"],
                                  WindowConfig(max_frames=args.max_frames, min_interval_sec=args.min_interval))
        pipeline.set_task(build_task(["put the green stick in the brown bowl"]), 0.0, start=True)
        rng = np.random.default_rng(0)
        pool = [rng.integers(0, 256, (args.frame, args.frame, 3), dtype=np.uint8) for _ in range(16)]
        total_frames = int(args.sim_seconds * args.fps)
        step_every = max(1, int(round(args.fps / args.rate_hz)))
        sample_every = max(1, int(round(args.sample_every * args.fps)))
        samples, steps, restarts, max_window, max_cache, events = [], 0, 0, 0, 0, 0
        gc.collect()
        rss_start = common.rss_kb()
        wall0 = time.perf_counter()
        for index in range(1, total_frames + 1):
            stamp = index / args.fps
            rgb = pool[index % len(pool)].copy()
            rgb[0, :8, 0] = np.frombuffer(index.to_bytes(8, "little"), dtype=np.uint8)  # distinct content
            pipeline.add_frame("front", Frame(stamp, rgb))
            if index % step_every == 0:
                report = pipeline.step()
                steps += 1
                events += sum(len(r.update.events) for r in report.results)
                if not pipeline.monitor.running:
                    restarts += 1
                    pipeline.start_episode(stamp, reason="benchmark restart")
                max_window = max(max_window, len(pipeline.windows["front"]))
                max_cache = max(max_cache, len(model.vision_cache))
            if index % sample_every == 0 or index == total_frames:
                samples.append({"sim_s": round(stamp, 3), "wall_s": round(time.perf_counter() - wall0, 2),
                                "rss_mb": common.rss_kb() / 1024, "window_frames": len(pipeline.windows["front"]),
                                "feature_cache_blocks": len(model.vision_cache), "steps": steps})
        wall = time.perf_counter() - wall0
        pipeline.close()
        model.close()
    warm = [s for s in samples if s["sim_s"] >= args.warmup_fraction * args.sim_seconds]
    reference = warm[0]["rss_mb"] if warm else samples[0]["rss_mb"]
    after = [s["rss_mb"] for s in warm]
    growth = (max(after) - reference) / reference * 100.0 if after else 0.0
    drift_last = (after[-1] - reference) / reference * 100.0 if after else 0.0
    result = {
        "benchmark": "memory", "machine": common.machine(), "torch_threads": torch.get_num_threads(),
        "sim_seconds": args.sim_seconds, "fps": args.fps, "rate_hz": args.rate_hz, "frames": total_frames,
        "steps": steps, "events": events, "episode_restarts": restarts, "wall_s": wall,
        "speedup_vs_real_time": args.sim_seconds / wall, "rss_start_mb": rss_start / 1024,
        "rss_reference_mb": reference, "rss_max_after_warmup_mb": max(after) if after else None,
        "rss_min_after_warmup_mb": min(after) if after else None, "rss_last_mb": samples[-1]["rss_mb"],
        "growth_after_warmup_pct": growth, "drift_last_vs_reference_pct": drift_last,
        "flat_within_5pct": abs(growth) <= 5.0 and abs(drift_last) <= 5.0,
        "max_window_frames": max_window, "window_bound": args.max_frames,
        "window_bounded": max_window <= args.max_frames, "max_feature_cache_blocks": max_cache,
        "samples": samples,
    }
    shown = samples if len(samples) <= 13 else samples[::max(1, len(samples) // 12)] + [samples[-1]]
    print(common.table(["sim s", "wall s", "RSS MB", "window frames", "cached blocks", "steps"],
                       [[s["sim_s"], s["wall_s"], s["rss_mb"], s["window_frames"], s["feature_cache_blocks"],
                         s["steps"]] for s in shown], digits=1))
    print(common.table(["frames", "steps", "wall s", "x real time", "RSS ref MB", "RSS max MB", "growth %",
                        "flat <=5%", "max window", "bound"],
                       [[total_frames, steps, wall, result["speedup_vs_real_time"], reference,
                         result["rss_max_after_warmup_mb"], growth, result["flat_within_5pct"], max_window,
                         args.max_frames]]))
    common.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
