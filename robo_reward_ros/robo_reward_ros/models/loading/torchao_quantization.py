# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""torchao weight-only quantization (int8wo, int4wo): the quantized path that needs no bitsandbytes.

torchao installs from PyPI wherever torch does (on aarch64 a pure-Python wheel, so a Jetson takes
it beside NVIDIA's torch) and runs on PyTorch's own kernels; activations stay bf16.

- int8wo: int8 weights, one scale per output row (``Int8WeightOnlyConfig``), any device.
- int4wo: int4 weights with a scale and zero point per ``INT4_GROUP_SIZE`` inputs. On CUDA it is
  tinygemm's packed layout (``_weight_int4pack_mm``, sm_80 and newer, Jetson Orin is sm_87); on the
  CPU torchao 0.18 has only its prototype layout for ``_weight_int4pack_mm_for_cpu``.

A Linear whose input width is not a multiple of the group size is left unquantized by torchao.
"""
import torch

# Divides every Linear input width of Qwen3-VL-4B (2560, 9728, 1024, 4096) and of the test
# checkpoints (64 ... 1536), so tests quantize the layers a robot does; tinygemm takes 32-256.
INT4_GROUP_SIZE = 64

# What transformers can write to safetensors (torchao's safetensors support, torchao 0.18):
# Int8Tensor (int8wo) and Int4TilePackedTo4dTensor (int4wo on CUDA), not the CPU int4 layout.
SERIALIZABLE = {("int8wo", "cpu"), ("int8wo", "cuda"), ("int4wo", "cuda")}


def import_torchao(precision: str):
    """Import torchao or say what to install."""
    try:
        import torchao
    except ImportError as exc:
        raise RuntimeError(f"precision {precision!r} needs the torchao package (pip install torchao; the "
                           f"version requirements/model.txt pins): {exc}") from exc
    return torchao


def weight_config(precision: str, device: torch.device):
    """Return the torchao config object that quantizes a Linear for ``precision`` on ``device``."""
    import_torchao(precision)
    if precision == "int8wo":
        from torchao.quantization import Int8WeightOnlyConfig
        return Int8WeightOnlyConfig()
    if precision != "int4wo":
        raise ValueError(f"not a torchao precision: {precision!r}")
    if device.type == "cuda":
        if torch.cuda.get_device_capability(device) < (8, 0):
            raise RuntimeError("precision 'int4wo' needs an sm_80 or newer GPU (tinygemm int4 kernels, bf16); "
                               "use int8wo or nf4")
        from torchao.quantization import Int4WeightOnlyConfig
        return Int4WeightOnlyConfig(group_size=INT4_GROUP_SIZE, int4_packing_format="tile_packed_to_4d")
    from torchao.prototype.quantization.int4 import PrototypeInt4WeightOnlyConfig
    return PrototypeInt4WeightOnlyConfig(group_size=INT4_GROUP_SIZE)


def torchao_config(precision: str, device: torch.device, skip_modules=None):
    """``TorchAoConfig`` for ``from_pretrained``; ``skip_modules`` stay in the compute dtype."""
    from transformers import TorchAoConfig
    return TorchAoConfig(weight_config(precision, device), modules_to_not_convert=list(skip_modules or []) or None)


def check_serializable(precision: str, device: torch.device) -> None:
    """Refuse a pre-quantized save that safetensors cannot hold, before loading anything."""
    if (precision, device.type) not in SERIALIZABLE:
        raise ValueError(f"precision {precision!r} on {device.type}: torchao's safetensors support has no "
                         f"layout for it; save int4wo on the CUDA device that will run it (or use int8wo)")
