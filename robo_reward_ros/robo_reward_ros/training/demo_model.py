"""Reproduce the demo's trained model and its held-out report.

    python -m robo_reward_ros.training.demo_model [--work DIR] [--install] [--report]

1. Meta-World episode sets (training/metaworld_set.py): the training tasks at seeds 1..N, held-out
   seeds (seed 0, and the demo's own episodes) and held-out tasks. Never trained on: the last two.
2. A tiny Qwen3-VL-architecture Robometer-layout checkpoint with random weights
   (models/testing/tiny_checkpoints.py), then ``robo-reward finetune`` on the training set (full
   fine-tune on CPU: about 20 minutes on 2 cores; ``--steps`` changes it).
3. ``--install``: copies the result where the demo looks for it when the package has no
   committed weights (``~/.cache/robo_reward_ros/demo-robometer-trained-weights``).
4. ``--report``: ``robo-reward replay`` + ``eval`` of the trained and the untrained (random) model
   on both held-out sets with the demo's node parameters; the table goes to ``WORK/report.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, Optional, Sequence

from robo_reward_ros.demo import DEMO_PARAMETERS

TRAIN_SEEDS = 8
BASE_MODEL_ID = "Qwen/Qwen3-VL-4B-Instruct"
# The demo's rules for 10-second clips, for the per-epoch eval and the report's replays too.
NODE_PARAMS = [f"{name}={value:g}" for name, value in DEMO_PARAMETERS.items()]


def recipe(steps: int) -> Dict[str, object]:
    """Return the finetune settings of the committed model (README, "Fine-tuning").

    The same as ``robo-reward finetune --mode full --epochs 4 --steps-per-epoch STEPS/4 --batch-size 8 --lr 2e-3
    --frame-stride 2 --counterfactual-fraction 0.1 --preference-fraction 0.1 --no-eval-preference``
    with the demo's node parameters as ``-p``.
    """
    epochs = 4
    return {"mode": "full", "epochs": epochs, "steps_per_epoch": max(1, steps // epochs),
            "batch_size": 8, "lr": 2e-3, "frame_stride": 2, "counterfactual_fraction": 0.1,
            "preference_fraction": 0.1, "eval_preference": False, "eval_params": list(NODE_PARAMS)}


def train(work: str, steps: int, train_seeds: int = TRAIN_SEEDS) -> str:
    from robo_reward_ros.training.finetune import FinetuneConfig, finetune
    from robo_reward_ros.models.testing.tiny_checkpoints import build_checkpoint
    from robo_reward_ros.training.metaworld_set import build_sets
    bags = os.path.join(work, "bags")
    build_sets(bags, train_seeds=train_seeds)
    base = os.path.join(work, "base")
    if not os.path.isfile(os.path.join(base, "config.yaml")):
        build_checkpoint("robometer", base)
    out = os.path.join(work, "trained")
    finetune(FinetuneConfig(model=base, episodes=[os.path.join(bags, "train")], out=out,
                            eval_episodes=[os.path.join(bags, "heldout-seeds")], **recipe(steps)))
    return out


def install(trained: str, target: str = "") -> str:
    """Copy the model where the demo finds it (the cache, or ``target``: the package's data/demo-robometer to commit).

    config.yaml names the real base model (the tiny one's tokenizer and processor are Qwen3-VL's),
    not this machine's path; the demo points it at an offline-built copy (evaluation/demo_assets.py).
    """
    from robo_reward_ros.evaluation.demo_assets import cache_dir, copy_trained_model
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
    from robo_reward_ros.evaluation.replay_run import run_replay
    replay = os.path.join(out, "replay")
    run_replay([bags], replay, model, "robometer", "fp32", "cpu", NODE_PARAMS, plots=False, progress_bar=False)
    return run_eval([replay], os.path.join(out, "eval"), preference=False)["metrics"]


def report(work: str, trained: str, untrained: str) -> str:
    """Replay + eval of both models on both held-out sets; a markdown table of the figures."""
    results: Dict[str, Dict] = {}
    for name in ("heldout-seeds", "heldout-tasks"):
        for label, model in (("trained", trained), ("random", untrained)):
            results[f"{name}/{label}"] = evaluate(model, os.path.join(work, "bags", name),
                                                  os.path.join(work, "report", name, label))
    with open(os.path.join(work, "report.json"), "w") as handle:
        json.dump(results, handle, indent=1)
    lines = ["| metric | held-out seeds: trained | random | held-out tasks: trained | random |",
             "|---|---|---|---|---|"]
    for title, read in ROWS:
        cells = []
        for key in ("heldout-seeds/trained", "heldout-seeds/random", "heldout-tasks/trained",
                    "heldout-tasks/random"):
            value = read(results[key])
            cells.append("n/a" if value is None else f"{value:.2f}")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    counts = {k: v["episodes"] for k, v in results.items()}
    lines.append("")
    lines.append(f"Episodes: {counts['heldout-seeds/trained']} (held-out seeds), "
                 f"{counts['heldout-tasks/trained']} (held-out tasks); node parameters {NODE_PARAMS}.")
    path = os.path.join(work, "report.md")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def main(argv: Optional[Sequence[str]] = None) -> int:
    from robo_reward_ros.evaluation.demo_assets import cache_dir
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=os.path.join(cache_dir(), "demo-model-training"))
    parser.add_argument("--steps", type=int, default=2000, help="training steps (2000)")
    parser.add_argument("--train-seeds", type=int, default=TRAIN_SEEDS)
    parser.add_argument("--install", action="store_true", help="copy the model where the demo finds it")
    parser.add_argument("--install-to", default="", help="copy the model here instead of the cache "
                        "(robo_reward_ros/robo_reward_ros/data/demo-robometer: the committed copy)")
    parser.add_argument("--report", action="store_true", help="held-out report, trained vs random")
    args = parser.parse_args(argv)
    trained = train(args.work, args.steps, args.train_seeds)
    if args.install or args.install_to:
        print(f"demo model installed in {install(trained, args.install_to)}")
    if args.report:
        path = report(args.work, trained, os.path.join(args.work, "base"))
        print(open(path).read())
        print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
