# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Precision and device choices, turned into ``from_pretrained`` arguments.

bf16 is the published dtype and the fastest on CPU; nf4 is how a 4B model fits an 8 GB GPU;
int8 trades speed for memory on GPU. bitsandbytes >= 0.50 also runs both on CPU (layer widths
must be multiples of 64 for 4-bit). int8wo/int4wo are torchao's weight-only counterparts, for
machines where bitsandbytes does not run from a PyPI wheel (Jetson).
"""
import logging
from typing import Any, Dict, List, Optional

import torch

from robo_reward_ros.models.loading.choices import (  # noqa: F401
    BITSANDBYTES_PRECISIONS, DEVICES, PRECISIONS, QUANTIZED, TORCHAO_PRECISIONS, check_device, check_precision)

# The torchao precision and preset to name when bitsandbytes is missing.
TORCHAO_ALTERNATIVE = {"nf4": ("int4wo", "robometer-4b-int4wo"), "int8": ("int8wo", "robometer-4b-int8wo")}

LOG = logging.getLogger(__name__)


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` means the first CUDA device when there is one, else the CPU."""
    check_device(device)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but torch sees no CUDA device")
    return torch.device(device)


def compute_dtype(precision: str, device: torch.device) -> torch.dtype:
    """Return the dtype activations run in: fp32 for fp32; bf16 for quantized and bf16 weights."""
    check_precision(precision)
    if precision == "fp32":
        return torch.float32
    if precision == "fp16" or precision == "int8":
        return torch.float16  # LLM.int8 matmuls run in fp16 whatever the input dtype
    if precision in QUANTIZED and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        return torch.float16
    return torch.bfloat16


def quantization_config(precision: str, device: torch.device, skip_modules: Optional[List[str]] = None):
    """Return a ``BitsAndBytesConfig`` for nf4/int8, a ``TorchAoConfig`` for int8wo/int4wo, or None."""
    if precision in TORCHAO_PRECISIONS:
        from robo_reward_ros.models.loading.torchao_quantization import torchao_config
        return torchao_config(precision, device, skip_modules)
    if precision not in BITSANDBYTES_PRECISIONS:
        return None
    try:
        import bitsandbytes  # noqa: F401  (fail here with a clear message, not deep inside transformers)
    except ImportError as exc:
        alternative, preset = TORCHAO_ALTERNATIVE[precision]
        raise RuntimeError(f"precision {precision!r} needs the bitsandbytes package ({exc}); without it use "
                           f"torchao's precision {alternative!r} (preset {preset}, or model.precision "
                           f"{alternative}), which needs only the torchao wheel from PyPI (Jetson "
                           "included)") from exc
    from transformers import BitsAndBytesConfig
    skip = list(skip_modules or [])
    if precision == "nf4":
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                  bnb_4bit_compute_dtype=compute_dtype(precision, device),
                                  bnb_4bit_use_double_quant=False, llm_int8_skip_modules=skip or None)
    return BitsAndBytesConfig(load_in_8bit=True, llm_int8_skip_modules=skip or None)


def checkpoint_kwargs(model_id: str, config_json: Dict[str, Any], precision: str, device: torch.device,
                      skip_modules: Optional[List[str]] = None) -> Dict[str, Any]:
    """``from_pretrained_kwargs`` for this checkpoint.

    A pre-quantized one (``robo-reward quantize``) keeps its own quantization and the requested
    precision is ignored, with a warning.
    """
    already = "quantization_config" in config_json
    if already and precision not in QUANTIZED:
        LOG.warning("%s is pre-quantized (%s); precision %r ignored", model_id,
                    config_json["quantization_config"].get("quant_method"), precision)
    return from_pretrained_kwargs(precision, device, skip_modules, already_quantized=already)


def from_pretrained_kwargs(precision: str, device: torch.device, skip_modules: Optional[List[str]] = None,
                           already_quantized: bool = False) -> Dict[str, Any]:
    """dtype, device map and quantization for ``from_pretrained``; never remote code, safetensors only."""
    kwargs: Dict[str, Any] = {"dtype": compute_dtype(precision, device), "trust_remote_code": False,
                              "use_safetensors": True, "device_map": {"": str(device)}}
    if not already_quantized:
        config = quantization_config(precision, device, skip_modules)
        if config is not None:
            kwargs["quantization_config"] = config
    return kwargs


def release_weights(backend) -> None:
    """Drop a backend's weights and give accelerator memory back.

    The node's lifecycle cleanup must leave the GPU free for whatever is configured next.
    """
    import gc

    backend.model = None
    gc.collect()
    if backend.device.type == "cuda":
        torch.cuda.empty_cache()
