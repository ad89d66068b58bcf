# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Reproduce the demo's trained model and its held-out report.

    python -m robo_reward_ros.training.demo_model [--work DIR] [--base DIR] [--install] [--report]

1. Meta-World episode sets (training/metaworld_set.py): every v3 task with a scripted expert but
   the project's 8 test tasks and 3 validation tasks, at seeds 1..N (a frame every 2 control
   steps); the validation tasks (the per-epoch eval, to choose settings by), held-out seeds
   (seed 0 of the first demo model's 8 tasks, and the demo's own episodes) and the test tasks.
   Never trained on: the last three.
2. ``robo-reward finetune`` on the training set from ``--base``: by default the installed demo
   model (a warm start: it already reads the images) or, with ``--base random``, a tiny
   Qwen3-VL-architecture Robometer-layout checkpoint with random weights
   (models/testing/tiny_checkpoints.py; the first demo model's start). Full fine-tune on CPU.
3. ``--install``: copies the result where the demo looks for it when the package has no
   committed weights (``~/.cache/robo_reward_ros/demo-robometer-trained-weights``).
4. ``--report``: ``robo-reward replay`` + ``eval`` of the trained and the base model on the
   held-out seeds and the test tasks with the demo's node parameters; the table goes to
   ``WORK/report.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, Optional, Sequence

from robo_reward_ros.simulation.demo_assets import DEMO_PARAMETERS

TRAIN_SEEDS = 2
FRAME_EVERY = 2
BASE_MODEL_ID = "Qwen/Qwen3-VL-4B-Instruct"
# The demo's rules for 10-second clips, for the per-epoch eval and the report's replays too; not
# its operator settings: a replay has no person to confirm a decision, and a confirmed decision
# would wait for the timeout (they once went in as "operator.confirm_decisions=1", which the
# replay refuses: the report failed).
NODE_PARAMS = [f"{name}={value:g}" for name, value in DEMO_PARAMETERS.items() if not name.startswith("operator.")]


def recipe(steps: int, epochs: int = 4) -> Dict[str, object]:
    """Return the finetune settings of the broader training set (docs/fine-tuning.md, issue 18's candidate).

    Not those of the committed demo model, which this module trained as of commit 1fb38fe.

    The same as ``robo-reward finetune --mode full --epochs 4 --steps-per-epoch STEPS/4 --batch-size 8
    --lr 1e-3 --counterfactual-fraction 0.2 --contrast-share 0.5 --preference-fraction 0.1
    --no-eval-preference`` with the demo's node parameters as ``-p``.
    """
    return {"mode": "full", "epochs": epochs, "steps_per_epoch": max(1, steps // epochs),
            "batch_size": 8, "lr": 1e-3, "frame_stride": 1, "counterfactual_fraction": 0.2,
            "contrast_share": 0.5, "preference_fraction": 0.1, "eval_preference": False,
            "eval_params": list(NODE_PARAMS)}


def base_model(work: str, base: str) -> str:
    """Return the checkpoint to start from: ``random`` (tiny, random), a directory, or the installed demo model."""
    if base == "random":
        from robo_reward_ros.models.testing.tiny_checkpoints import build_checkpoint
        path = os.path.join(work, "base")
        if not os.path.isfile(os.path.join(path, "config.yaml")):
            build_checkpoint("robometer", path)
        return path
    if base:
        return base
    from robo_reward_ros.models.loading.bundled_demo import trained_demo_checkpoint
    path = trained_demo_checkpoint()
    if path is None:
        raise SystemExit("no installed demo model to start from: pass --base random")
    return path


def train(work: str, steps: int, base: str, train_seeds: int = TRAIN_SEEDS) -> str:
    from robo_reward_ros.training.finetune import FinetuneConfig, finetune
    from robo_reward_ros.training.metaworld_set import build_sets
    bags = os.path.join(work, "bags")
    build_sets(bags, train_seeds=train_seeds, frame_every=FRAME_EVERY)
    out = os.path.join(work, "trained")
    finetune(FinetuneConfig(model=base, episodes=[os.path.join(bags, "train")], out=out,
                            eval_episodes=[os.path.join(bags, "validation")], **recipe(steps)))
    return out


def install(trained: str, target: str = "") -> str:
    """Copy the model where the demo finds it (the cache, or ``target``: the package's data/demo-robometer to commit).

    config.yaml names the real base model (the tiny one's tokenizer and processor are Qwen3-VL's),
    not this machine's path; the demo points it at an offline-built copy (models/loading/bundled_demo.py).
    """
    from robo_reward_ros.models.loading.bundled_demo import cache_dir, copy_trained_model
    target = target or os.path.join(cache_dir(), "demo-robometer-trained-weights")
    return copy_trained_model(trained, target, BASE_MODEL_ID)


ROWS = (("VOC, Pearson to the progress label", lambda m: m["voc_pearson_successful"]),
        ("VOC, Spearman with time", lambda m: m["voc_spearman_time_successful"]),
        ("Kendall tau_a across outcomes", lambda m: m["kendall_tau_a"]["mean"]),
        ("success - failure difference", lambda m: m["success_failure_diff"]["mean"]),
        ("success detection F1", lambda m: m["success_detection"].get("f1")),
        ("success detection delay, median s", lambda m: m["success_detection_delay_s"]["median"]),
        ("failure detection F1", lambda m: m["failure_detection"].get("f1")),
        ("failure detection delay, median s", lambda m: m["failure_detection_delay_s"]["median"]))


def evaluate(model: str, bags: str, out: str) -> Dict:
    from robo_reward_ros.evaluation.eval_run import run_eval
    from robo_reward_ros.replay.replay_run import run_replay
    replay = os.path.join(out, "replay")
    run_replay([bags], replay, model, "robometer", "fp32", "cpu", NODE_PARAMS, plots=False, progress_bar=False)
    return run_eval([replay], os.path.join(out, "eval"), preference=False)["metrics"]


def report(work: str, trained: str, base: str) -> str:
    """Replay + eval of both models on the held-out seeds and the test tasks; a markdown table of the figures."""
    results: Dict[str, Dict] = {}
    for name in ("heldout-seeds", "test-tasks"):
        for label, model in (("trained", trained), ("base", base)):
            results[f"{name}/{label}"] = evaluate(model, os.path.join(work, "bags", name),
                                                  os.path.join(work, "report", name, label))
    with open(os.path.join(work, "report.json"), "w") as handle:
        json.dump(results, handle, indent=1)
    keys = ("heldout-seeds/trained", "heldout-seeds/base", "test-tasks/trained", "test-tasks/base")
    lines = ["| metric | held-out seeds: trained | base | test tasks: trained | base |",
             "|---|---|---|---|---|"]
    for title, read in ROWS:
        cells = []
        for key in keys:
            value = read(results[key])
            cells.append("n/a" if value is None else f"{value:.2f}")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Episodes: {results[keys[0]]['episodes']} (held-out seeds), "
                 f"{results[keys[2]]['episodes']} (test tasks); node parameters {NODE_PARAMS}.")
    path = os.path.join(work, "report.md")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def main(argv: Optional[Sequence[str]] = None) -> int:
    from robo_reward_ros.models.loading.bundled_demo import cache_dir
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=os.path.join(cache_dir(), "demo-model-training"))
    parser.add_argument("--steps", type=int, default=2000, help="training steps (2000)")
    parser.add_argument("--base", default="", help="checkpoint to start from: a directory, 'random', or "
                        "(default) the installed demo model")
    parser.add_argument("--train-seeds", type=int, default=TRAIN_SEEDS)
    parser.add_argument("--install", action="store_true", help="copy the model where the demo finds it")
    parser.add_argument("--install-to", default="", help="copy the model here instead of the cache "
                        "(robo_reward_ros/robo_reward_ros/data/demo-robometer: the committed copy)")
    parser.add_argument("--report", action="store_true", help="held-out report, trained vs base")
    args = parser.parse_args(argv)
    base = base_model(args.work, args.base)
    trained = train(args.work, args.steps, base, args.train_seeds)
    if args.install or args.install_to:
        print(f"demo model installed in {install(trained, args.install_to)}")
    if args.report:
        path = report(args.work, trained, base)
        print(open(path).read())
        print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
