# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Save a checkpoint already quantized (nf4, int8, int8wo, int4wo), so a robot does not re-quantize at start.

The output keeps the source layout: a Robometer directory still says ``architectures: ["RFM"]``
and carries config.yaml (pointing at the same base model); a Qwen3-VL directory keeps its
tokenizer and processor files. ``config.json`` gains ``quantization_config``, which the loaders
detect and honour (the requested precision is then ignored with a warning). Weights are
safetensors for every precision; torchao's int4 layout for the CPU has no safetensors form, so
int4wo is saved on the CUDA device that will run it (its packed layout is that device's kernel's).
The command is ``robo-reward quantize`` (cli/quantize.py).
"""
import json
import os
import shutil

from robo_reward_ros.models.loading.precision import QUANTIZED, TORCHAO_PRECISIONS, resolve_device

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")


def save_quantized(model_id: str, out_dir: str, precision: str = "nf4", device: str = "auto",
                   backend: str = "auto") -> str:
    """Load ``model_id`` quantized (bitsandbytes or torchao) and write it to ``out_dir``."""
    from robo_reward_ros.models.loading.loader import load_reward_model
    if precision not in QUANTIZED:
        raise ValueError(f"precision must be one of {QUANTIZED}, got {precision!r}")
    if precision in TORCHAO_PRECISIONS:
        from robo_reward_ros.models.loading.torchao_quantization import check_serializable
        check_serializable(precision, resolve_device(device))
    reward_model = load_reward_model(model_id, backend=backend, precision=precision, device=device)
    os.makedirs(out_dir, exist_ok=True)
    reward_model.model.save_pretrained(out_dir, safe_serialization=True)
    if os.path.isdir(model_id):
        for name in os.listdir(model_id):
            source = os.path.join(model_id, name)
            target = os.path.join(out_dir, name)
            if (os.path.isfile(source) and not name.endswith(WEIGHT_SUFFIXES) and name != "config.json"
                    and name != "model.safetensors.index.json"):
                shutil.copyfile(source, target)
    else:
        processing = getattr(reward_model, "processing")
        processing.tokenizer.save_pretrained(out_dir)
    if reward_model.name == "robometer":
        if not os.path.isdir(model_id):
            from robo_reward_ros.models.loading.checkpoint_layout import model_file
            shutil.copyfile(model_file(model_id, "config.yaml"), os.path.join(out_dir, "config.yaml"))
        path = os.path.join(out_dir, "config.json")
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
        config["architectures"] = ["RFM"]
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2, sort_keys=True)
    reward_model.close()
    return out_dir
