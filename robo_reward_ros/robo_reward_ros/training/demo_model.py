"""Reproduce the demo's trained model: Meta-World training episodes, a tiny Qwen3-VL-architecture
Robometer-layout checkpoint, ``robo-reward finetune`` (full fine-tune, CPU, ~15-20 minutes on 2 cores).

    python -m robo_reward_ros.training.demo_model [--work DIR] [--install]

``--install`` copies the result where the demo looks for it when the package has no committed
weights (``~/.cache/robo_reward_ros/demo-robometer-trained-weights``). The demo's own episodes
(seed 0) and the held-out tasks are never trained on (training/metaworld_set.py).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import Optional, Sequence

# The recipe of the committed model (see the README, "Fine-tuning").
RECIPE = ["--mode", "full", "--epochs", "4", "--steps-per-epoch", "200", "--batch-size", "4",
          "--lr", "1e-3", "--frame-stride", "2", "--no-eval-preference",
          "-p", "failure.stall_window_sec=4", "-p", "failure.low_progress_grace_sec=5",
          "-p", "inference.rate_hz=2"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    from robo_reward_ros.evaluation.demo_assets import TRAINED_FILES, cache_dir
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=os.path.join(cache_dir(), "demo-model-training"))
    parser.add_argument("--install", action="store_true", help="copy the model where the demo finds it")
    args = parser.parse_args(argv)
    from robo_reward_ros.cli.finetune import main as finetune_main
    from robo_reward_ros.models.tiny_checkpoints import build_checkpoint
    from robo_reward_ros.training.metaworld_set import build_sets
    bags = os.path.join(args.work, "bags")
    build_sets(bags, only=("train", "heldout-seeds"))
    base = os.path.join(args.work, "base")
    if not os.path.isfile(os.path.join(base, "config.yaml")):
        build_checkpoint("robometer", base)
    out = os.path.join(args.work, "trained")
    held = os.path.join(bags, "heldout-seeds")
    code = finetune_main(["--model", base, "--episodes", os.path.join(bags, "train"), "--out", out,
                          "--eval-episodes", held] + RECIPE)
    if code or not args.install:
        return code
    target = os.path.join(cache_dir(), "demo-robometer-trained-weights")
    os.makedirs(target, exist_ok=True)
    for name in TRAINED_FILES + ("config.yaml",):
        shutil.copyfile(os.path.join(out, name), os.path.join(target, name))
    print(f"demo model installed in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
