# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Load a plain Qwen3-VL checkpoint (RoboReward fine-tunes, TOPReward's instruct model) with checks."""
from typing import Tuple

import torch

from robo_reward_ros.models.loading import checkpoint_layout as layout
from robo_reward_ros.models.loading.precision import checkpoint_kwargs
from robo_reward_ros.models.qwen.processing import QwenProcessing


def load_qwen3vl(model_id: str, precision: str, device: torch.device, padding_side: str = "right"
                 ) -> Tuple[torch.nn.Module, QwenProcessing]:
    """``Qwen3VLForConditionalGeneration`` plus its tokenizer/processor settings, or a CheckpointError."""
    from transformers import Qwen3VLForConditionalGeneration
    config_json = layout.load_config_json(model_id)
    kind = layout.detect_backend(config_json)
    if kind != "qwen3vl":
        raise layout.CheckpointError(f"{model_id}: a {kind} checkpoint, not a plain Qwen3-VL model")
    layout.check_weight_files(model_id)
    try:
        processing = QwenProcessing.from_pretrained(model_id, padding_side=padding_side)
    except (OSError, ValueError) as exc:
        raise layout.CheckpointError(f"{model_id}: tokenizer/processor could not be loaded: {exc}") from exc
    kwargs = checkpoint_kwargs(model_id, config_json, precision, device)
    model = Qwen3VLForConditionalGeneration.from_pretrained(model_id, **kwargs).eval()
    return model, processing
