# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Per-step cost of a reward query with and without the caches, on the same inputs.

A robot stream is simulated: one new frame per step, the model scores the current window. The
cached path keeps per-frame vision features (and, for TOPReward, the prompt-prefix KV cache); the
uncached path recomputes everything each step. Prints the median per-step time of both and the
ratio. Without --model, tiny checkpoints are built in a temporary folder.

    python bench/bench_reward_step.py --backend robometer --steps 12
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "robo_reward_ros"))

from robo_reward_ros.models import Frame, load_reward_model  # noqa: E402


def stream(count, height, width, seed=0):
    rng = np.random.default_rng(seed)
    return [Frame(stamp=i / 10.0, rgb=rng.integers(0, 256, (height, width, 3), dtype=np.uint8)) for i in range(count)]


def run_steps(model, backend, instruction, frames, steps, window, cached):
    """Seconds per step, each step scoring the newest ``window`` frames (TOPReward: all frames so far)."""
    model.reset()
    times = []
    for step in range(steps):
        end = window + step
        if backend == "topreward":
            current = frames[:min(end, model.max_frames)] if step < model.max_frames else frames[:end]
            start = time.perf_counter()
            model.log_probs(instruction, current[-model.max_frames:], use_cache=cached)
        elif backend == "robometer":
            current = frames[end - window:end]
            start = time.perf_counter()
            seq = model.progress_sequence(instruction, model.select(current))
            model.last_hidden_states([seq], use_cache=cached)
        else:
            current = frames[:end][-model.max_frames:]
            start = time.perf_counter()
            model.digit_logits([model.sequence(instruction, current)], use_cache=cached)
        times.append(time.perf_counter() - start)
    return times[1:]  # the first step fills the caches in both modes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="robometer", choices=("robometer", "roboreward", "topreward"))
    parser.add_argument("--model", help="checkpoint directory or id (default: build a tiny one)")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--size", type=int, default=224, help="frame side in pixels")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.model
        if path is None:
            from robo_reward_ros.models.testing.tiny_checkpoints import build_checkpoint, build_qwen3vl
            if args.backend == "topreward":
                path = build_qwen3vl(os.path.join(tmp, "qwen3vl"))
            else:
                path = build_checkpoint(args.backend, os.path.join(tmp, args.backend))
        model = load_reward_model(path, backend=args.backend, precision=args.precision, device=args.device)
        frames = stream(args.window + args.steps, args.size, args.size)
        instruction = "put the green stick in the brown bowl"
        uncached = run_steps(model, args.backend, instruction, frames, args.steps, args.window, cached=False)
        cached = run_steps(model, args.backend, instruction, frames, args.steps, args.window, cached=True)
        model.close()
    t_unc, t_cac = statistics.median(uncached), statistics.median(cached)
    print(f"backend={args.backend} precision={args.precision} device={args.device} window={args.window} "
          f"frame={args.size}px steps={len(cached)}")
    print(f"uncached per step: {t_unc * 1000:.1f} ms (median)")
    print(f"cached per step:   {t_cac * 1000:.1f} ms (median)")
    print(f"ratio uncached/cached: {t_unc / t_cac:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
