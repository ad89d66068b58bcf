# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Robometer's network: a ``Qwen3VLModel`` backbone plus progress/success/preference heads.

Module names are those of upstream ``RBM`` (reward-models.md 1.2), so the published state dict
(``model.visual.*``, ``model.language_model.*``, ``*_head.{0,1,4}.*``, ``frame_pool_attn.weight``)
loads by name through transformers' ``from_pretrained``: sharded safetensors, dtype and
bitsandbytes quantization all come from there.
"""
import torch
from torch import nn
from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLModel, Qwen3VLPreTrainedModel

HEAD_NAMES = ("progress_head", "success_head", "preference_head")
# Kept in full precision when the backbone is quantized; upstream runs the heads in bf16.
UNQUANTIZED_MODULES = list(HEAD_NAMES) + ["frame_pool_attn"]


def reward_head(hidden_size: int, out_features: int) -> nn.Sequential:
    """Linear -> LayerNorm -> exact GELU -> Dropout(0.1) -> Linear, no output activation."""
    half = hidden_size // 2
    return nn.Sequential(nn.Linear(hidden_size, half), nn.LayerNorm(half, eps=1e-5), nn.GELU(),
                         nn.Dropout(0.1), nn.Linear(half, out_features))


class RobometerModel(Qwen3VLPreTrainedModel):
    """The published ``RFM``/``RBM`` module tree; ``config.robometer_progress_bins`` sizes the progress head."""

    def __init__(self, config):
        super().__init__(config)
        hidden = config.text_config.hidden_size
        self.model = Qwen3VLModel(config)
        self.progress_head = reward_head(hidden, int(getattr(config, "robometer_progress_bins", 10)))
        self.success_head = reward_head(hidden, 1)
        self.preference_head = reward_head(hidden, 1)
        # Unused in per-frame-token mode; present so the published weights load without leftovers.
        self.frame_pool_attn = nn.Linear(hidden, 1, bias=False)
        self.post_init()

    def head_outputs(self, hidden_rows: torch.Tensor):
        """Progress logits, success logits and preference logits of the given hidden-state rows."""
        rows = hidden_rows.to(self.progress_head[0].weight.dtype)
        return self.progress_head(rows), self.success_head(rows), self.preference_head(rows)


def decode_progress(logits: torch.Tensor) -> torch.Tensor:
    """Return the expected bin centre: softmax(logits) . linspace(0, 1, bins), in fp32 (upstream discrete mode).

    Rows that already sum to 1 are treated as probabilities, as upstream does.
    """
    logits = logits.float()
    bins = logits.shape[-1]
    if bins == 1:
        return torch.sigmoid(logits[..., 0])
    sums = logits.sum(dim=-1, keepdim=True)
    is_prob = (logits >= 0).all(dim=-1, keepdim=True) & torch.isclose(sums, torch.ones_like(sums), atol=1e-4)
    probs = torch.where(is_prob, logits, torch.softmax(logits, dim=-1))
    centres = torch.linspace(0.0, 1.0, bins, device=logits.device)
    return (probs * centres).sum(dim=-1)
