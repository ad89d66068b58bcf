# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
r"""``robo-reward finetune``: fine-tune a Robometer-layout reward model on your own episode bags.

    robo-reward finetune --model BASE --episodes BAG_OR_DIR... --out DIR [--mode heads|lora|full]
    robo-reward finetune --model BASE --episodes robot_bags/ --labels labels.csv \
        --camera-topic /wrist/image_raw/compressed --instruction "pick up the cube" --out DIR
    robo-reward finetune --model BASE --episodes ~/bags/today \
        --episode-logs ~/.ros/robo_reward/episodes --out DIR --mode heads

Reads the bags ``replay``/``eval`` read; trains with the Robometer objective (10-bin progress
classification, success BCE, preference BCE; pairs and negatives built from the episodes); writes
a checkpoint in the published layout (``--out``), ``training_curves.png``, ``training.json`` and,
every epoch, ``eval/epoch-N/report.md`` on held-out episodes (``--eval-episodes`` or
``--val-fraction``). Re-running the same command resumes from ``DIR/resume``. Several GPUs or
nodes: ``accelerate launch -m robo_reward_ros.cli.main finetune ...``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail, no_progress_bars
from robo_reward_ros.cli.recording_args import add_recording_arguments, recording_options


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="robo-reward finetune", description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", required=True, help="base Robometer checkpoint (directory or hub id)")
    p.add_argument("--episodes", nargs="+", required=True, help="bag folders, or folders holding them")
    p.add_argument("--out", required=True, help="output checkpoint folder (also holds resume state)")
    p.add_argument("--eval-episodes", nargs="+", default=[], help="held-out bags for the per-epoch eval")
    p.add_argument("--val-fraction", type=float, default=0.0,
                   help="without --eval-episodes: hold out this share of each task's episodes")
    p.add_argument("--mode", choices=("heads", "lora", "full"), default="full",
                   help="heads only; LoRA on the language model (+ heads); everything but the embeddings")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=0,
                   help="0: 4 clips per labelled episode stage / batch size")
    p.add_argument("--batch-size", type=int, default=4, help="sequences per step and process")
    p.add_argument("--lr", type=float, default=0.0, help="0: 1e-3 heads, 5e-4 lora, 3e-4 full")
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--warmup-steps", type=int, default=20)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--progress-weight", type=float, default=1.0, help="weight of the progress loss")
    p.add_argument("--success-weight", type=float, default=1.0, help="weight of the success loss")
    p.add_argument("--preference-weight", type=float, default=1.0, help="weight of the preference loss")
    p.add_argument("--counterfactual-fraction", type=float, default=0.15,
                   help="share of clips relabelled with another task's instruction (progress 0)")
    p.add_argument("--contrast-share", type=float, default=0.5,
                   help="share of those clips given the opposite task's instruction where the episodes have one "
                        "(open/close, press/pull, lock/unlock the same object)")
    p.add_argument("--preference-fraction", type=float, default=0.2, help="share of preference pairs")
    p.add_argument("--max-frames", type=int, default=0, help="frames per clip (0: the checkpoint's)")
    p.add_argument("--frame-stride", type=int, default=1, help="keep every N-th frame (memory)")
    p.add_argument("--lora-rank", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=32)
    p.add_argument("--train-embeddings", action="store_true", help="full mode: train the embeddings too")
    p.add_argument("--gradient-checkpointing", action="store_true",
                   help="recompute activations in the backward pass (large models on one GPU)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: a CUDA device if torch sees one, else the CPU")
    p.add_argument("--mixed-precision", choices=("no", "bf16", "fp16"), default="no")
    p.add_argument("--save-dtype", choices=("bf16", "fp32", "fp16"), default="bf16")
    p.add_argument("-p", "--eval-param", action="append", default=[], metavar="NAME=VALUE",
                   help="reward_node parameter for the per-epoch replay (repeatable)")
    p.add_argument("--no-eval-preference", action="store_true", help="skip preference accuracy in eval")
    p.add_argument("--skip-unusable", action="store_true", help="skip unusable episodes (default: error)")
    p.add_argument("--no-resume", action="store_true", help="start over even if DIR/resume exists")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--labels", default="", metavar="CSV_OR_YAML",
                   help="outcomes (and success times) of robot recordings, which carry none: columns "
                        "episode,outcome[,success_sec,failure_sec,task,failure_kind]; see robo-reward eval")
    p.add_argument("--episode-logs", nargs="+", default=[], metavar="DIR",
                   help="instead of --labels: the reward node's episode logs of the recorded session; they "
                        "cut the recordings into the node's episodes and the operator's corrections label "
                        "them (docs/fine-tuning.md, From operator corrections)")
    p.add_argument("--trust-model-successes", action="store_true",
                   help="with --episode-logs: a model success no operator contradicted counts as a success "
                        "(off: only operator verdicts and confirmed model successes do)")
    p.add_argument("--keep-intervention-frames", action="store_true",
                   help="with --episode-logs: keep the frames under an operator's takeover (default: left out)")
    p.add_argument("--clip-scores", default="", metavar="JSONL_OR_CSV",
                   help="per-clip progress in [0, 1] (robo-reward poise --out; id = episode name): each named "
                        "episode's progress labels end at its score (docs/fine-tuning.md)")
    add_recording_arguments(p)
    return p


def config_from_args(args: argparse.Namespace):
    """Return the FinetuneConfig the parsed flags describe."""
    from robo_reward_ros.training.finetune import FinetuneConfig
    return FinetuneConfig(
        model=args.model, episodes=args.episodes, out=args.out, eval_episodes=args.eval_episodes,
        val_fraction=args.val_fraction, mode=args.mode, epochs=args.epochs,
        steps_per_epoch=args.steps_per_epoch, batch_size=args.batch_size, lr=args.lr,
        weight_decay=args.weight_decay, warmup_steps=args.warmup_steps, grad_clip=args.grad_clip,
        progress_weight=args.progress_weight, success_weight=args.success_weight,
        preference_weight=args.preference_weight, counterfactual_fraction=args.counterfactual_fraction,
        contrast_share=args.contrast_share,
        preference_fraction=args.preference_fraction, max_frames=args.max_frames,
        frame_stride=args.frame_stride, lora_rank=args.lora_rank, lora_alpha=args.lora_alpha,
        train_embeddings=args.train_embeddings, gradient_checkpointing=args.gradient_checkpointing,
        seed=args.seed, device=args.device,
        mixed_precision=args.mixed_precision, save_dtype=args.save_dtype, eval_params=args.eval_param,
        eval_preference=not args.no_eval_preference, skip_unusable=args.skip_unusable,
        resume=not args.no_resume, progress_bar=not args.quiet, reading=recording_options(args),
        labels=args.labels, episode_logs=args.episode_logs, clip_scores=args.clip_scores,
        trust_model_successes=args.trust_model_successes, keep_intervention_frames=args.keep_intervention_frames)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.quiet:
        no_progress_bars()
    from robo_reward_ros.models.loading.checkpoint_layout import CheckpointError
    from robo_reward_ros.training.episodes import UnusableEpisodeError
    from robo_reward_ros.training.finetune import finetune
    config = config_from_args(args)
    try:
        result = finetune(config)
    except (UnusableEpisodeError, CheckpointError, FileNotFoundError, RuntimeError, ValueError) as exc:
        return fail("finetune", exc)
    evaluated = any("report" in row for row in result["history"]["eval"])  # held-out bags: eval/
    print(f"finetune: {result['steps']} steps in {result['train_seconds']:.0f} s -> {result['out']}/ "
          f"(checkpoint, training_curves.png, training.json{', eval/' if evaluated else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
