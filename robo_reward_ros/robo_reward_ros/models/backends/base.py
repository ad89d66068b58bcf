# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What the three Qwen3-VL backends share, so each file holds only its model's contract.

Every backend runs on one device, keeps a vision-feature cache fed by the torch tower or an ONNX
Runtime graph, forgets per-episode state on ``reset`` and gives its weights (and accelerator
memory) back on ``close``.
"""
from typing import FrozenSet, Optional, Sequence

from robo_reward_ros.models.loading.precision import release_weights, resolve_device
from robo_reward_ros.models.onnx.runtime import vision_encoder
from robo_reward_ros.models.qwen.vision_feature_cache import VisionFeatureCache
from robo_reward_ros.models.reward_model import RewardModel


class QwenRewardBackend(RewardModel):
    # qwen-vl-utils' smart_resize refuses frames longer than 200 times their width (or wider);
    # None for a backend that squares every frame first.
    max_aspect_ratio: Optional[float] = 200.0

    def __init__(self, model_id: str, device: str, cache_vision: bool, vision_runtime: str,
                 vision_onnx: Optional[str], onnx_providers: Optional[Sequence[str]]) -> None:
        """``vision_runtime="onnx"`` runs the vision tower from ``vision_onnx`` on an ONNX Runtime provider.

        ``vision_onnx`` is a graph or a directory of them (see models/onnx/export.py); the provider is the
        first of ``onnx_providers`` (default TensorRT, CUDA, CPU) available. Options are checked before
        weights load.
        """
        self.model_id = model_id
        self.device = resolve_device(device)
        self.vision_cache = VisionFeatureCache(
            enabled=cache_vision, encoder=vision_encoder(vision_runtime, vision_onnx, onnx_providers))

    def reserved_texts(self) -> FrozenSet[str]:
        """Every special and added token of the loaded tokenizer (chat markers, vision placeholders, scoring tokens)."""
        if getattr(self, "_reserved_texts", None) is None:
            tokenizer = self.processing.tokenizer
            self._reserved_texts = frozenset(
                t for t in set(tokenizer.all_special_tokens) | set(tokenizer.get_added_vocab()) if t.strip())
        return self._reserved_texts

    def reset(self) -> None:
        self.vision_cache.clear()

    def close(self) -> None:
        self.reset()
        release_weights(self)
