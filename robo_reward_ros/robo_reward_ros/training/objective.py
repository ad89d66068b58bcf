# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The Robometer objective on a batch of examples, and the trainable module around the network.

Per ``<|prog_token|>`` row: progress as a ``bins``-way classification (cross-entropy against a
two-hot target: the label's weight split between the two neighbouring bin centres of
``linspace(0, 1, bins)``, so the decoded expectation ``softmax . centres`` equals the label) and
success as a binary classification (BCE on the success head's logit). Per ``<|pref_token|>``:
BCE of the preference head's logit against "A is better". Each term is a mean over its rows;
the loss is their weighted sum. A row may carry a success label without a progress label (NaN):
an operator's veto says "not done yet", not how far it got.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from robo_reward_ros.training.episodes import Example


@dataclasses.dataclass
class LossWeights:
    progress: float = 1.0
    success: float = 1.0
    preference: float = 1.0


def two_hot(progress: torch.Tensor, bins: int) -> torch.Tensor:
    """[N] labels in [0, 1] -> [N, bins] targets whose expectation over the bin centres is the label."""
    position = progress.clamp(0.0, 1.0) * (bins - 1)
    low = position.floor().long().clamp(max=bins - 1)
    high = (low + 1).clamp(max=bins - 1)
    upper = position - low.float()
    target = torch.zeros(progress.shape[0], bins, device=progress.device)
    target.scatter_add_(1, low[:, None], (1.0 - upper)[:, None])
    target.scatter_add_(1, high[:, None], upper[:, None])
    return target


class RobometerTrainingModule(nn.Module):
    """Backbone forward plus the heads at the given token positions.

    Together, so that DDP, which ``accelerate`` wraps around this module, sees every parameter used
    in one forward.
    """

    def __init__(self, network: nn.Module) -> None:
        super().__init__()
        self.network = network

    def forward(self, inputs: Dict[str, torch.Tensor], prog_index: torch.Tensor, pref_index: torch.Tensor):
        hidden = self.network.model(**inputs).last_hidden_state
        prog_rows = hidden[prog_index[:, 0], prog_index[:, 1]]
        progress_logits, success_logits, _ = self.network.head_outputs(prog_rows)
        preference_logits = None
        if len(pref_index):
            _, _, preference_logits = self.network.head_outputs(hidden[pref_index[:, 0], pref_index[:, 1]])
        return progress_logits, success_logits, preference_logits


@dataclasses.dataclass
class Batch:
    inputs: Dict[str, torch.Tensor]
    prog_index: torch.Tensor  # [N, 2] (row, column) of the progress tokens that carry labels
    progress: torch.Tensor  # [N]; NaN: no progress label on that row (success only)
    success: torch.Tensor  # [N]
    pref_index: torch.Tensor  # [M, 2]
    preference: torch.Tensor  # [M]
    kinds: List[str]


def build_batch(backend, examples: Sequence[Example], device: torch.device) -> Batch:
    """Robometer's own prompts (the inference path's sequence builders) for every example, right-padded into one batch.

    With raw pixels: the vision tower runs with gradients.
    """
    from robo_reward_ros.models.qwen.sequences import collate, vision_inputs
    from robo_reward_ros.models.backends.robometer_special_tokens import PREF_TOKEN, PROG_TOKEN
    sequences, prog_index, progress, success, pref_index, preference = [], [], [], [], [], []
    prog_id, pref_id = backend.token_ids[PROG_TOKEN], backend.token_ids[PREF_TOKEN]
    for row, example in enumerate(examples):
        if example.kind == "preference":
            seq = backend.preference_sequence(example.instruction, example.frames, example.frames_b)
            pref_index.append((row, int(np.nonzero(seq.input_ids == pref_id)[0][-1])))
            preference.append(example.preference)
            labelled = len(example.frames)  # the first half of the prog tokens is A's
        else:
            seq = backend.progress_sequence(example.instruction, example.frames)
            labelled = len(example.frames)
        positions = np.nonzero(seq.input_ids == prog_id)[0][:labelled]
        if example.success is not None:
            prog_index += [(row, int(p)) for p in positions]
            progress += ([float(v) for v in example.progress] if example.progress is not None
                         else [float("nan")] * len(positions))
            success += [float(v) for v in example.success]
        sequences.append(seq)
    inputs = collate(sequences, backend.processing.tokenizer.pad_token_id, device)
    inputs.update(vision_inputs(None, sequences, None, backend.processing.image.merge_size, device))
    as_index = lambda pairs: torch.tensor(pairs, dtype=torch.long, device=device).reshape(-1, 2)  # noqa: E731
    return Batch(inputs, as_index(prog_index), torch.tensor(progress, device=device),
                 torch.tensor(success, device=device), as_index(pref_index),
                 torch.tensor(preference, device=device), [e.kind for e in examples])


def robometer_loss(outputs, batch: Batch, weights: LossWeights, bins: int) -> Dict[str, torch.Tensor]:
    progress_logits, success_logits, preference_logits = outputs
    zero = progress_logits.sum() * 0.0  # keeps every head in the graph
    terms = {"progress": zero, "success": zero, "preference": zero}
    known = ~torch.isnan(batch.progress)
    if known.any():
        log_probs = F.log_softmax(progress_logits.float()[known], dim=-1)
        terms["progress"] = -(two_hot(batch.progress[known], bins) * log_probs).sum(-1).mean()
    if len(batch.progress):
        terms["success"] = F.binary_cross_entropy_with_logits(success_logits.float()[:, 0], batch.success)
    if preference_logits is not None and len(batch.preference):
        terms["preference"] = F.binary_cross_entropy_with_logits(preference_logits.float()[:, 0],
                                                                 batch.preference)
    terms["loss"] = (weights.progress * terms["progress"] + weights.success * terms["success"]
                     + weights.preference * terms["preference"])
    return terms


def progress_mae(outputs, batch: Batch) -> Optional[float]:
    from robo_reward_ros.models.backends.robometer_modeling import decode_progress
    known = ~torch.isnan(batch.progress)
    if not known.any():
        return None
    with torch.no_grad():
        return float((decode_progress(outputs[0])[known] - batch.progress[known]).abs().mean())
