"""Load a plain Qwen3-VL checkpoint (RoboReward fine-tunes, TOPReward's instruct model) with checks."""
import logging
from typing import Tuple

import torch

from . import checkpoint_layout as layout
from .precision import QUANTIZED, from_pretrained_kwargs
from .qwen_processing import QwenProcessing

LOG = logging.getLogger(__name__)


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
    already = "quantization_config" in config_json
    if already and precision not in QUANTIZED:
        LOG.warning("%s is pre-quantized; precision %r ignored", model_id, precision)
    kwargs = from_pretrained_kwargs(precision, device, None, already_quantized=already)
    model = Qwen3VLForConditionalGeneration.from_pretrained(model_id, **kwargs).eval()
    return model, processing
