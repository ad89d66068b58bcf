# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Reuse the KV cache of the part of a Qwen3-VL prompt that did not change since the last query.

Attention is causal and Qwen3-VL's mRoPE positions of a token depend only on the tokens before it,
so the keys/values of a shared prompt prefix (same tokens, same vision blocks) are exactly those a
full recompute would give. Each query appends only what is new. The reused length is cut back to a
vision-block boundary so every block's features enter in one piece (deepstack adds them at their
positions), and never reaches past the first position whose output the caller reads.

TOPReward's growing video shares everything but the newest blocks and the text tail; Robometer's
sliding window keeps the instruction and the stage's first frame (the frame window never drops it),
and everything after that frame moves every step.
"""
import inspect
from typing import Any, Callable, Dict, Hashable, List

import numpy as np
import torch

from robo_reward_ros.models.qwen.sequences import QwenSequence
from robo_reward_ros.models.qwen.vision_feature_cache import VisionFeatureCache, encoder_output


def vision_token_id(config, modality: str) -> int:
    """Return the placeholder token id of one image or video patch."""
    return int(config.image_token_id if modality == "image" else config.video_token_id)


def token_signature(seq: QwenSequence, vision_id: int) -> List[Hashable]:
    """Token ids, with each vision token also naming its block's pixel content."""
    signature: List[Hashable] = []
    block = -1
    previous = None
    for token in seq.input_ids.tolist():
        if token == vision_id:
            if previous != vision_id:
                block += 1
            signature.append((seq.blocks[block].key, token))
        else:
            signature.append(token)
        previous = token
    return signature


def block_spans(input_ids: np.ndarray, vision_id: int) -> List[tuple]:
    """(start, end) token span of each run of vision tokens, in order."""
    is_vision = np.concatenate([[0], (input_ids == vision_id).astype(np.int8), [0]])
    edges = np.diff(is_vision)
    return list(zip(np.nonzero(edges == 1)[0].tolist(), np.nonzero(edges == -1)[0].tolist()))


def _cache_argument(forward: Callable) -> str:
    params = inspect.signature(getattr(forward, "forward", forward)).parameters  # a module's own forward
    return "cache" if "cache" in params else "past_key_values"


def _crop(cache, keep: int) -> None:
    remove = cache.get_seq_length() - keep
    if remove > 0:
        cache.crop(-remove)  # negative: number of tokens to drop (accepted by old and new transformers)


class PrefixKVCache:
    """The KV cache of the last prompt (batch of one) and what it was computed from."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._cache = None
        self._signature: List[Hashable] = []
        self.reused_tokens = 0
        self.computed_tokens = 0

    def clear(self) -> None:
        self._cache = None
        self._signature = []

    def _reusable_length(self, signature: List[Hashable], spans: List[tuple], read_from: int) -> int:
        if not self.enabled or self._cache is None:
            return 0
        limit = min(len(signature), len(self._signature), read_from)
        start = 0
        while start < limit and signature[start] == self._signature[start]:
            start += 1
        for begin, end in spans:
            if begin < start < end:
                return begin
        return start

    @torch.inference_mode()
    def forward(self, forward: Callable[..., Any], qwen_model, seq: QwenSequence, vision_cache: VisionFeatureCache,
                merge_size: int, device: torch.device, read_from: int, **extra: Any):
        """Run ``forward`` (a Qwen3-VL model's) on the part of ``seq`` not already cached.

        ``qwen_model`` is the ``Qwen3VLModel`` inside (positions and the vision tower); ``read_from``
        is the first position the caller reads an output at. Returns the output and the position of its
        first row.
        """
        vision_id = vision_token_id(qwen_model.config, seq.modality)
        signature = token_signature(seq, vision_id)
        spans = block_spans(seq.input_ids, vision_id)
        start = self._reusable_length(signature, spans, read_from)
        cache = self._cache if start > 0 else None
        if cache is not None:
            _crop(cache, start)
        ids = torch.from_numpy(seq.input_ids)[None].to(device)
        types = torch.from_numpy(seq.mm_token_type_ids)[None].to(device)
        grids = torch.tensor([b.grid for b in seq.blocks], dtype=torch.long, device=device)
        grid_name = "image_grid_thw" if seq.modality == "image" else "video_grid_thw"
        positions, _ = qwen_model.get_rope_index(ids, types, **{grid_name: grids})
        kwargs: Dict[str, Any] = {"input_ids": ids[:, start:], "position_ids": positions[:, :, start:],
                                  "use_cache": True, _cache_argument(forward): cache, **extra}
        is_new = [begin >= start for begin, _ in spans]
        if any(is_new):
            features = vision_cache.features(qwen_model.visual, seq.blocks, merge_size, device)
            kwargs["mm_encoder_outputs"] = {
                seq.modality: encoder_output([f for f, new in zip(features, is_new) if new])}
        output = forward(**kwargs)
        if self.enabled:
            self._cache = getattr(output, "cache", None) or getattr(output, "past_key_values", None)
            self._signature = signature
        self.reused_tokens += start
        self.computed_tokens += len(signature) - start
        return output, start
