# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Bytes a reward step moves through memory, measured on a small checkpoint and carried to the 4B one.

At batch 1 a decoder step on a Jetson is bound by how many bytes it reads, or by its FLOPs; weight
quantization changes only the first. ``measure`` hooks every ``nn.Linear`` during one real step
and records how many rows (tokens or patches) each call multiplied, what its stored weight holds
(quantized tensors count their packed data, scales and zero points) and the activations in and
out. Rows per call depend only on the frames and the prompt (patch 16, merge 2: the same for every
Qwen3-VL size), so ``carry_to`` applies the measured rows to the 4B model's Linear shapes (built on
the meta device) with each precision's storage per weight, checked against the measured storage
of the small checkpoint. Not counted: attention scores and keys/values, norms, the vision patch
convolution, embedding rows: the figures are lower bounds.
"""
import re
from typing import Any, Dict

# Bytes per stored weight of an in_features x out_features Linear, as the libraries store them:
# bitsandbytes nf4 an fp32 absmax per 64 weights, int8 an fp32 scale per row; torchao 0.18 int8wo an
# fp32 scale and int8 zero point per row, int4wo a bf16 scale and zero per 64 inputs.
INT4_GROUP = 64


def stored_weight_bytes(precision: str, in_features: int, out_features: int) -> float:
    weights = in_features * out_features
    if precision == "fp32":
        return 4.0 * weights
    if precision in ("bf16", "fp16"):
        return 2.0 * weights
    if precision == "int8":
        return weights + 4.0 * out_features
    if precision == "int8wo":
        return weights + 5.0 * out_features  # fp32 scale and int8 zero point per row
    if precision in ("int4wo", "nf4"):
        if in_features % INT4_GROUP:
            return 2.0 * weights  # left unquantized
        return weights / 2.0 + 4.0 * weights / INT4_GROUP
    raise ValueError(precision)


def activation_bytes(precision: str) -> int:
    return 4 if precision == "fp32" else 2


def tensor_storage_bytes(tensor) -> int:
    """Bytes a (possibly quantized) tensor really holds: a tensor subclass counts its inner tensors."""
    import torch
    if type(tensor).__module__.startswith("torchao"):
        names, _ = tensor.__tensor_flatten__()
        return sum(tensor_storage_bytes(getattr(tensor, name)) for name in names)
    total = tensor.numel() * tensor.element_size()
    state = getattr(tensor, "quant_state", None)  # bitsandbytes 4-bit: absmax per block beside the data
    if state is not None:
        total += state.absmax.numel() * state.absmax.element_size()
    scb = getattr(tensor, "SCB", None)  # bitsandbytes int8: a scale per row
    if isinstance(scb, torch.Tensor):
        total += scb.numel() * scb.element_size()
    return total


def _pattern(name: str) -> str:
    return re.sub(r"\.\d+\.", ".N.", name)


def measure(model, step) -> Dict[str, Any]:
    """Run ``step()`` once with hooks on every Linear: totals, and the rows of each call per module."""
    import torch

    records = []

    def hook(module, inputs, output):
        in_features, out_features = int(module.in_features), int(module.out_features)
        rows = inputs[0].numel() // in_features
        records.append({"name": module._traffic_name, "rows": rows, "in": in_features, "out": out_features,
                        "weight_bytes": tensor_storage_bytes(module.weight),
                        "activation_bytes": inputs[0].numel() * inputs[0].element_size()
                        + output.numel() * output.element_size(),
                        "flops": 2 * rows * in_features * out_features})

    handles = []
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            module._traffic_name = name
            handles.append(module.register_forward_hook(hook))
    try:
        step()
    finally:
        for handle in handles:
            handle.remove()
    calls: Dict[str, Dict[str, list]] = {}
    for r in records:
        calls.setdefault(_pattern(r["name"]), {}).setdefault(r["name"], []).append(r["rows"])
    # Every module of a pattern (the same projection in each layer) sees the same rows.
    rows_per_module = {pattern: sorted(by_name.values())[0] for pattern, by_name in calls.items()}
    return {"weight_bytes": sum(r["weight_bytes"] for r in records),
            "activation_bytes": sum(r["activation_bytes"] for r in records),
            "flops": sum(r["flops"] for r in records), "linear_calls": len(records),
            "rows_per_module": rows_per_module,
            "shapes": [(r["name"], r["in"], r["out"]) for r in records]}


def _kept(name: str) -> bool:
    """Robometer's heads stay unquantized (models/backends/robometer_modeling.py UNQUANTIZED_MODULES)."""
    return name.startswith(("progress_head", "success_head", "preference_head", "frame_pool_attn"))


def formula_weight_bytes(shapes, precision: str) -> float:
    """Apply the storage formula to the measured calls (a check against the measured storage)."""
    return sum(stored_weight_bytes("bf16" if _kept(name) and precision != "fp32" else precision, i, o)
               for name, i, o in shapes)


def carry_to(size: str, rows_per_module: Dict[str, list], precision: str) -> Dict[str, float]:
    """Bytes and FLOPs of one step of the Robometer model of ``size`` (built on the meta device)."""
    import torch
    from robo_reward_ros.models.backends.robometer_modeling import RobometerModel
    from robo_reward_ros.models.testing.tiny_checkpoints import QWEN_BASE_VOCAB, tiny_qwen3_vl_config
    config = tiny_qwen3_vl_config(QWEN_BASE_VOCAB + 4, ["RFM"], size=size)
    with torch.device("meta"):
        model = RobometerModel(config)
    weight = activation = flops = 0.0
    for name, module in model.named_modules():
        calls = rows_per_module.get(_pattern(name)) if isinstance(module, torch.nn.Linear) else None
        if not calls:
            continue  # not called in a Robometer step (lm_head, frame_pool_attn)
        i, o = int(module.in_features), int(module.out_features)
        stored = stored_weight_bytes("bf16" if _kept(name) and precision != "fp32" else precision, i, o)
        for rows in calls:
            weight += stored
            activation += rows * (i + o) * activation_bytes(precision)
            flops += 2.0 * rows * i * o
    return {"weight_bytes": weight, "activation_bytes": activation, "bytes": weight + activation, "flops": flops}
