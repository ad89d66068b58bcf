# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Training modes (which parameters learn) and the output checkpoint in the published layout.

Modes:
- ``heads``: the progress, success and preference heads only;
- ``lora``: LoRA adapters (peft) on the language model's attention and MLP projections, plus the
  heads; merged into the weights when saved, so the output needs no peft;
- ``full``: everything but the token embedding table (151k rows that the prompts barely use;
  ``train_embeddings`` includes it).

The output is ``robometer/Robometer-4B``'s layout: ``config.json`` (``architectures: ["RFM"]``)
and ``config.yaml`` of the base checkpoint, ``model-0000N-of-00002.safetensors`` (language model
in the first shard, vision tower and heads in the second) and ``model.safetensors.index.json``:
what ``load_reward_model``, ``robo-reward score`` and the node load unchanged.
"""
from __future__ import annotations

import json
import os
import shutil
from typing import Dict, List

import torch

from robo_reward_ros.models.loading.checkpoint_layout import model_file, write_sharded_weights
from robo_reward_ros.models.backends.robometer_modeling import HEAD_NAMES

MODES = ("heads", "lora", "full")
LORA_TARGETS = r".*model\.language_model\.layers\.\d+\.(self_attn\.(q|k|v|o)_proj|mlp\.(gate|up|down)_proj)"


def configure_mode(network: torch.nn.Module, mode: str, lora_rank: int = 16, lora_alpha: int = 32,
                   lora_dropout: float = 0.05, train_embeddings: bool = False) -> List[str]:
    """Set ``requires_grad`` (and add LoRA layers) for the mode; return the trainable names."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if mode == "lora":
        try:
            from peft import LoraConfig, inject_adapter_in_model
        except ImportError:
            raise RuntimeError("--mode lora needs peft: pip install peft (pinned in requirements/)") from None
        config = LoraConfig(r=lora_rank, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
                            target_modules=LORA_TARGETS, bias="none")
        inject_adapter_in_model(config, network)
    for name, param in network.named_parameters():
        head = name.split(".")[0] in HEAD_NAMES
        if mode == "heads":
            param.requires_grad = head
        elif mode == "lora":
            param.requires_grad = head or "lora_" in name
        else:
            param.requires_grad = train_embeddings or "embed_tokens" not in name
    names = [n for n, p in network.named_parameters() if p.requires_grad]
    if not names:
        raise RuntimeError(f"mode {mode}: no trainable parameters")
    return names


def exported_state(network: torch.nn.Module, dtype: torch.dtype) -> Dict[str, torch.Tensor]:
    """Return the published key names and values; LoRA deltas merged into their base weights."""
    lora_layers = {}
    for name, module in network.named_modules():
        if hasattr(module, "get_delta_weight") and hasattr(module, "base_layer"):
            lora_layers[name] = module
    state = {}
    for key, value in network.state_dict().items():
        if "lora_" in key:
            continue
        clean = key.replace(".base_layer.", ".")
        value = value.detach()
        owner = key.rsplit(".base_layer.", 1)[0] if ".base_layer." in key else None
        if owner in lora_layers and key.endswith(".base_layer.weight"):
            layer = lora_layers[owner]
            value = value + sum(layer.get_delta_weight(a) for a in layer.active_adapters).to(value.dtype)
        state[clean] = value.to(dtype).contiguous().cpu()
    return state


def save_published_layout(network: torch.nn.Module, base_dir: str, out_dir: str,
                          dtype: torch.dtype = torch.bfloat16) -> str:
    """Write the checkpoint (atomically per file) into ``out_dir``; extra files there are kept."""
    os.makedirs(out_dir, exist_ok=True)
    state = exported_state(network, dtype)
    write_sharded_weights(state, out_dir)
    with open(model_file(base_dir, "config.json"), encoding="utf-8") as handle:
        config = json.load(handle)
    config["dtype"] = str(dtype).replace("torch.", "")
    config.pop("torch_dtype", None)
    with open(os.path.join(out_dir, "config.json"), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2, sort_keys=True)
    source_yaml = model_file(base_dir, "config.yaml")
    if os.path.abspath(source_yaml) != os.path.abspath(os.path.join(out_dir, "config.yaml")):
        shutil.copyfile(source_yaml, os.path.join(out_dir, "config.yaml"))
    return out_dir


def trainable_state(network: torch.nn.Module) -> Dict[str, torch.Tensor]:
    return {n: p.detach().cpu().contiguous() for n, p in network.named_parameters() if p.requires_grad}
