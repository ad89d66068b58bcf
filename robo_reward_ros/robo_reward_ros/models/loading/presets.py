# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Named model set-ups for robots, so a launch line says what it runs, not five parameters.

Each preset fixes backend, model id and precision; ``model.id``/``model.precision`` parameters
still override a preset's values. Memory figures are for choosing a preset, not guarantees.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Tuple

from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR


@dataclasses.dataclass(frozen=True)
class ModelPreset:
    backend: str
    model_id: str
    precision: str
    note: str
    # Recommended monitor settings for this checkpoint, as (node parameter, value) pairs; the same
    # names and checks as a checkpoint's monitor_defaults.yaml (settings/monitor_defaults.py).
    # None ships yet: no published checkpoint has been calibrated here (robo-reward calibrate).
    monitor: Tuple[Tuple[str, Any], ...] = ()


PRESETS: Dict[str, ModelPreset] = {
    "robometer-4b-nf4": ModelPreset(
        "robometer", "robometer/Robometer-4B", "nf4",
        "Jetson Orin / 8 GB GPUs: progress + success + preference; ~3.3 GB resident reported"),
    "robometer-4b-int4wo": ModelPreset(
        "robometer", "robometer/Robometer-4B", "int4wo",
        "Jetson Orin / 8 GB GPUs from pip alone (torchao, no bitsandbytes): int4 weights, bf16 activations"),
    "robometer-4b-int8wo": ModelPreset(
        "robometer", "robometer/Robometer-4B", "int8wo",
        "torchao int8 weights, bf16 activations: closer to bf16 than int4, ~half its weight memory"),
    "robometer-4b": ModelPreset(
        "robometer", "robometer/Robometer-4B", "bf16",
        "x86 GPU with >= 12 GB: progress + success + preference in bf16"),
    "roboreward-4b": ModelPreset(
        "roboreward", "teetone/RoboReward-4B", "bf16",
        "1-5 progress score read as an expected score; no success head"),
    "roboreward-8b": ModelPreset(
        "roboreward", "teetone/RoboReward-8B", "bf16",
        "the larger RoboReward; >= 20 GB GPU in bf16"),
    # TrustRoboReward (RoboReward's scores kept consistent with its pairwise answers, POISE): its
    # weights were not published by 2026-12, so the slot has no model id; model.id names a copy.
    "trustroboreward-4b": ModelPreset(
        "roboreward", "", "bf16",
        "TrustRoboReward-4B: weights not published yet (no model id known); set model.id to a local "
        "copy in RoboReward's layout"),
    "topreward-qwen3vl-8b": ModelPreset(
        "topreward", "Qwen/Qwen3-VL-8B-Instruct", "bf16",
        "training-free: log-probability that the video completes the task"),
    "topreward-qwen3vl-4b": ModelPreset(
        "topreward", "Qwen/Qwen3-VL-4B-Instruct", "bf16",
        "training-free, smaller instruct model"),
    "demo": ModelPreset(
        "robometer", TRAINED_MODEL_DIR, "fp32",
        "the small demo model installed with the package: loads offline in seconds, any CPU; "
        "trained on Meta-World scenes only, for trying the node, not for a robot's task"),
}


def resolve_preset(name: str) -> ModelPreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown model preset '{name}' (known: {', '.join(PRESETS)}; "
                         "or none, and set model.id and model.backend)") from None
