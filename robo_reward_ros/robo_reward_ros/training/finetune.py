# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The fine-tuning loop: seeds, accelerate, progress bar, per-epoch checkpoint, eval and curves.

Every step's examples come from a generator seeded with ``(seed, step, process)``, and dropout
from ``seed + step``, so a run repeats exactly and a resumed run continues as if never stopped
(resume state: the trainable tensors in safetensors, the optimizer state, the step and history).
With ``accelerate launch`` each process draws its own examples and DDP averages the gradients;
the checkpoint, evaluation and curves are written by the main process.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

RESUME_DIR = "resume"


@dataclasses.dataclass
class FinetuneConfig:
    model: str
    episodes: Sequence[str]
    out: str
    eval_episodes: Sequence[str] = ()
    val_fraction: float = 0.0
    mode: str = "full"
    epochs: int = 3
    steps_per_epoch: int = 0  # 0: one example per labelled stage and 4 clips each, / batch size
    batch_size: int = 4
    lr: float = 0.0  # 0: the mode's default
    weight_decay: float = 0.0
    warmup_steps: int = 20
    grad_clip: float = 1.0
    progress_weight: float = 1.0
    success_weight: float = 1.0
    preference_weight: float = 1.0
    counterfactual_fraction: float = 0.15
    contrast_share: float = 0.5
    preference_fraction: float = 0.2
    max_frames: int = 0  # 0: the checkpoint's data.max_frames
    frame_stride: int = 1
    lora_rank: int = 16
    lora_alpha: int = 32
    train_embeddings: bool = False
    gradient_checkpointing: bool = False
    seed: int = 0
    device: str = "auto"
    mixed_precision: str = "no"
    save_dtype: str = "bf16"
    eval_params: Sequence[str] = ()
    eval_preference: bool = True
    skip_unusable: bool = False
    resume: bool = True
    progress_bar: bool = True
    log_every: int = 10
    reading: Optional[Any] = None  # RecordingOptions: bags not in the project's layout are robots' recordings
    labels: str = ""  # labels file for robots' recordings (recordings/episode_labels.py)
    episode_logs: Sequence[str] = ()  # or the reward node's episode logs (training/operator_episodes.py)
    trust_model_successes: bool = False  # with episode_logs: a model success no operator contradicted counts
    keep_intervention_frames: bool = False  # with episode_logs: keep the frames under a takeover
    clip_scores: str = ""  # per-clip progress (robo-reward poise --out): the named episodes' labels end there

    def default_lr(self) -> float:
        return self.lr or {"heads": 1e-3, "lora": 5e-4, "full": 3e-4}[self.mode]


def _seed_everything(seed: int) -> None:
    import random
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _lr_factor(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


class Finetuner:
    def __init__(self, config: FinetuneConfig, log=print) -> None:
        from accelerate import Accelerator
        from robo_reward_ros.models.backends.robometer import RobometerBackend
        from robo_reward_ros.models.loading import bundled_demo
        from robo_reward_ros.training.checkpoint import configure_mode
        from robo_reward_ros.training.episodes import (ExampleSampler, describe, load_episodes,
                                                       split_episodes)
        from robo_reward_ros.training.objective import LossWeights, RobometerTrainingModule
        self.config = config
        if config.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f"--device must be auto, cpu or cuda, not {config.device!r}")
        if config.device == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("--device cuda: torch sees no CUDA device here (use auto or cpu)")
        cpu = config.device == "cpu" or (config.device == "auto" and not torch.cuda.is_available())
        self.accelerator = Accelerator(cpu=cpu, mixed_precision=config.mixed_precision)
        self.log = log if self.accelerator.is_main_process else (lambda *_: None)
        _seed_everything(config.seed)
        if config.episode_logs:
            from robo_reward_ros.recordings.episode_log_labels import LogLabelling
            from robo_reward_ros.training.operator_episodes import load_logged_episodes
            if config.labels:
                raise ValueError("give --labels or --episode-logs, not both: each labels the robot recordings")
            if config.val_fraction > 0 and not config.eval_episodes:
                raise ValueError("--val-fraction holds out whole bags, and one bag holds the whole session "
                                 "cut by --episode-logs: hold out another session's bags with --eval-episodes")
            labelling = LogLabelling(tuple(config.episode_logs), config.trust_model_successes,
                                     config.keep_intervention_frames)
            episodes = load_logged_episodes(config.episodes, labelling, config.frame_stride,
                                            config.skip_unusable, self.log, config.reading)
        else:
            episodes = load_episodes(config.episodes, config.frame_stride, config.skip_unusable, self.log,
                                     config.reading, config.labels)
        if config.clip_scores:
            from robo_reward_ros.training.poise import apply_clip_scores, read_clip_scores
            changed = apply_clip_scores(episodes, read_clip_scores(config.clip_scores), self.log)
            self.log(f"finetune: {changed} episode(s) take their progress labels from {config.clip_scores}")
        self.eval_bags: List[str] = []
        if config.eval_episodes:
            from robo_reward_ros.recordings.episode_bag import find_bags
            self.eval_bags = find_bags(config.eval_episodes)
            self.train_episodes = episodes
        else:
            self.train_episodes, held = split_episodes(episodes, config.val_fraction, config.seed)
            # The eval replays whole bags: a bag one of whose episodes is held out is held out whole.
            self.eval_bags = sorted({e.bag for e in held})
            self.train_episodes = [e for e in self.train_episodes if e.bag not in self.eval_bags]
        self.log(f"finetune: training on {describe(self.train_episodes)}; "
                 f"{len(self.eval_bags)} held-out bag(s) for the per-epoch eval")
        # The inference path's own prompt builders and loader: what is trained is what runs.
        self.backend = RobometerBackend(bundled_demo.loadable(config.model, self.log), precision="fp32",
                                        device="cpu", cache_vision=False,
                                        max_frames=config.max_frames or None)
        self.network = self.backend.model
        self.network.train()
        if config.gradient_checkpointing:  # recompute layer activations in backward: less memory
            self.network.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        self.trainable = configure_mode(self.network, config.mode, config.lora_rank, config.lora_alpha,
                                        train_embeddings=config.train_embeddings)
        count = sum(p.numel() for p in self.network.parameters() if p.requires_grad)
        total = sum(p.numel() for p in self.network.parameters())
        self.log(f"finetune: mode {config.mode}, {count:,} of {total:,} parameters trainable")
        self.sampler = ExampleSampler(self.train_episodes, self.backend.max_frames,
                                      config.counterfactual_fraction, config.preference_fraction,
                                      config.contrast_share)
        self.weights = LossWeights(config.progress_weight, config.success_weight, config.preference_weight)
        labelled = len(self.sampler.labelled)
        self.steps_per_epoch = config.steps_per_epoch or max(1, math.ceil(4 * labelled / config.batch_size))
        self.total_steps = self.steps_per_epoch * config.epochs
        params = [p for p in self.network.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=config.default_lr(), weight_decay=config.weight_decay)
        self.module, self.optimizer = self.accelerator.prepare(RobometerTrainingModule(self.network),
                                                               self.optimizer)
        self.step = 0
        self.history: Dict[str, List[Dict[str, Any]]] = {"train": [], "eval": []}
        self.elapsed = 0.0

    # -- resume ----------------------------------------------------------------------------------
    def _resume_dir(self) -> str:
        return os.path.join(self.config.out, RESUME_DIR)

    def save_resume(self) -> None:
        from safetensors.torch import save_file
        from robo_reward_ros.training.checkpoint import trainable_state
        if not self.accelerator.is_main_process:
            return
        folder = self._resume_dir()
        os.makedirs(folder, exist_ok=True)
        save_file(trainable_state(self.network), os.path.join(folder, "trainable.safetensors.tmp"))
        os.replace(os.path.join(folder, "trainable.safetensors.tmp"),
                   os.path.join(folder, "trainable.safetensors"))
        tensors, groups = optimizer_to_tensors(self.optimizer.state_dict())
        save_file(tensors, os.path.join(folder, "optimizer.safetensors.tmp"))
        os.replace(os.path.join(folder, "optimizer.safetensors.tmp"), os.path.join(folder, "optimizer.safetensors"))
        state = {"step": self.step, "history": self.history, "elapsed_sec": self.elapsed,
                 "fingerprint": self._fingerprint(), "optimizer_param_groups": groups}
        with open(os.path.join(folder, "state.json.tmp"), "w") as handle:
            json.dump(state, handle)
        os.replace(os.path.join(folder, "state.json.tmp"), os.path.join(folder, "state.json"))

    def _fingerprint(self) -> Dict[str, Any]:
        c = self.config
        return {"model": c.model, "mode": c.mode, "seed": c.seed, "batch_size": c.batch_size,
                "steps_per_epoch": self.steps_per_epoch, "trainable": len(self.trainable)}

    def try_resume(self) -> bool:
        from safetensors.torch import load_file
        folder = self._resume_dir()
        if not (self.config.resume and os.path.isfile(os.path.join(folder, "state.json"))):
            return False
        with open(os.path.join(folder, "state.json")) as handle:
            state = json.load(handle)
        if state["fingerprint"] != self._fingerprint():
            raise RuntimeError(f"{folder} belongs to another run ({state['fingerprint']}, this one "
                               f"{self._fingerprint()}): use another --out or --no-resume")
        tensors = load_file(os.path.join(folder, "trainable.safetensors"))
        params = dict(self.network.named_parameters())
        with torch.no_grad():
            for name, value in tensors.items():
                params[name].copy_(value)
        self.optimizer.load_state_dict(optimizer_from_tensors(
            load_file(os.path.join(folder, "optimizer.safetensors")), state["optimizer_param_groups"]))
        self.step, self.history = int(state["step"]), state["history"]
        self.elapsed = float(state.get("elapsed_sec", 0.0))
        self.log(f"finetune: resumed from {folder} at step {self.step}")
        return True

    # -- training --------------------------------------------------------------------------------
    def train_step(self, examples) -> Dict[str, float]:
        from robo_reward_ros.training.objective import build_batch, progress_mae, robometer_loss
        batch = build_batch(self.backend, examples, self.accelerator.device)
        for group in self.optimizer.param_groups:
            group["lr"] = self.config.default_lr() * _lr_factor(self.step, self.total_steps,
                                                                self.config.warmup_steps)
        torch.manual_seed(self.config.seed * 1_000_003 + self.step)  # dropout
        self.module.train()
        with self.accelerator.autocast():
            outputs = self.module(batch.inputs, batch.prog_index, batch.pref_index)
        terms = robometer_loss(outputs, batch, self.weights, self.backend.progress_bins)
        self.optimizer.zero_grad(set_to_none=True)
        self.accelerator.backward(terms["loss"])
        if self.config.grad_clip > 0:
            self.accelerator.clip_grad_norm_([p for p in self.network.parameters() if p.requires_grad],
                                             self.config.grad_clip)
        self.optimizer.step()
        row = {k: float(v.detach()) for k, v in terms.items()}
        row["progress_mae"] = progress_mae(outputs, batch)
        return row

    def draw(self, step: int):
        rng = np.random.default_rng([self.config.seed, step, self.accelerator.process_index])
        return self.sampler.batch(rng, self.config.batch_size)

    def run(self) -> Dict[str, Any]:
        from tqdm import tqdm
        self.try_resume()
        bar = tqdm(total=self.total_steps, initial=self.step, desc="finetune", unit="step",
                   disable=not (self.config.progress_bar and self.accelerator.is_main_process))
        started = time.monotonic() - self.elapsed
        while self.step < self.total_steps:
            row = self.train_step(self.draw(self.step))
            self.step += 1
            row["step"] = self.step
            row["lr"] = self.optimizer.param_groups[0]["lr"]
            self.history["train"].append(row)
            bar.update(1)
            bar.set_postfix(loss=f"{row['loss']:.3f}", prog=f"{row['progress']:.3f}",
                            succ=f"{row['success']:.3f}")
            if self.step % self.steps_per_epoch == 0 or self.step == self.total_steps:
                self.elapsed = time.monotonic() - started
                self.end_of_epoch(math.ceil(self.step / self.steps_per_epoch))
        bar.close()
        self.elapsed = time.monotonic() - started
        return {"out": self.config.out, "steps": self.step, "train_seconds": self.elapsed,
                "history": self.history}

    def end_of_epoch(self, epoch: int) -> None:
        from robo_reward_ros.training.checkpoint import save_published_layout
        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process:
            dtype = {"bf16": torch.bfloat16, "fp32": torch.float32, "fp16": torch.float16}[self.config.save_dtype]
            save_published_layout(self.network, self.config.model, self.config.out, dtype)
            recent = self.history["train"][-self.steps_per_epoch:]
            summary = {"epoch": epoch, "step": self.step,
                       "train_loss": float(np.mean([r["loss"] for r in recent])),
                       "elapsed_sec": round(self.elapsed, 1)}
            if self.eval_bags:
                summary.update(self.evaluate(epoch))
            self.history["eval"].append(summary)
            self.log("finetune: " + ", ".join(
                f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in summary.items()
                if not isinstance(v, dict)))
            self.write_curves()
            self.write_training_json()
            self.save_resume()
        self.accelerator.wait_for_everyone()

    def evaluate(self, epoch: int) -> Dict[str, Any]:
        """Run the saved checkpoint through replay and eval (the offline tools) on the held-out bags."""
        from robo_reward_ros.evaluation.eval_run import run_eval
        from robo_reward_ros.replay.replay_run import run_replay
        folder = os.path.join(self.config.out, "eval", f"epoch-{epoch}")
        replay_dir = os.path.join(folder, "replay")
        run_replay(self.eval_bags, replay_dir, self.config.out, "robometer", "fp32", "cpu",
                   self.config.eval_params, plots=False, progress_bar=False, log=self.log,
                   reading=self.config.reading)
        result = run_eval([replay_dir], folder, self.config.eval_preference,
                          labels=self.config.labels, strict_labels=False)["metrics"]
        return {"report": os.path.join(folder, "report.md"), **headline(result)}

    def write_curves(self) -> str:
        from robo_reward_ros.training.curves import plot_curves
        return plot_curves(self.history, os.path.join(self.config.out, "training_curves.png"))

    def write_training_json(self) -> None:
        data = {"config": dataclasses.asdict(self.config), "steps": self.step,
                "steps_per_epoch": self.steps_per_epoch, "train_seconds": round(self.elapsed, 1),
                "episodes": [e.bag for e in self.train_episodes],
                "episode_names": [e.name for e in self.train_episodes], "eval_episodes": self.eval_bags,
                "history": self.history}
        data["config"]["episodes"] = list(self.config.episodes)
        data["config"]["eval_episodes"] = list(self.config.eval_episodes)
        data["config"]["eval_params"] = list(self.config.eval_params)
        data["config"]["episode_logs"] = list(self.config.episode_logs)
        if self.config.reading is not None:
            data["config"]["reading"] = self.config.reading.describe()
        with open(os.path.join(self.config.out, "training.json"), "w") as handle:
            json.dump(data, handle, indent=1)


def optimizer_to_tensors(state_dict: Dict[str, Any]):
    """Convert an optimizer state dict to safetensors tensors plus JSON param groups (no pickle)."""
    tensors = {}
    for index, slots in state_dict["state"].items():
        for name, value in slots.items():
            value = value if torch.is_tensor(value) else torch.tensor(value)
            tensors[f"{index}.{name}"] = value.detach().cpu().contiguous()
    return tensors, state_dict["param_groups"]


def optimizer_from_tensors(tensors: Dict[str, torch.Tensor], groups) -> Dict[str, Any]:
    state: Dict[int, Dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        index, name = key.split(".", 1)
        state.setdefault(int(index), {})[name] = value
    return {"state": state, "param_groups": groups}


def headline(result: Dict[str, Any]) -> Dict[str, Optional[float]]:
    """Pick the figures a training curve follows, from ``robo-reward eval``'s metrics."""
    def mean(entry):
        return entry.get("mean") if isinstance(entry, dict) else entry
    return {"voc_pearson": result.get("voc_pearson_successful"),
            "voc_spearman_time": result.get("voc_spearman_time_successful"),
            "kendall_tau_a": mean(result.get("kendall_tau_a")),
            "success_failure_diff": mean(result.get("success_failure_diff")),
            "preference_accuracy": result.get("preference_accuracy"),
            "success_f1": result["success_detection"].get("f1"),
            "failure_f1": result["failure_detection"].get("f1")}


def finetune(config: FinetuneConfig, log=print) -> Dict[str, Any]:
    return Finetuner(config, log).run()
