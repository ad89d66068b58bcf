# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Per-frame vision features kept while their frames stay in the window.

A robot asks for a reward several times a second on a window that changes by one frame. Qwen3-VL's
vision tower attends within one image (or one two-frame video block) at a time, so a block's
features depend only on its own pixels: each is encoded once and reused until it leaves the window.
Blocks are keyed by pixel content (a hash), not by timestamps, so a repeated or re-sent frame
still hits and a changed one never does. The encoder is pluggable (the torch tower by default, or
an ONNX Runtime graph, see ``onnx_vision_runtime``) so every backend gets the other runtime at once.
"""
import dataclasses
import hashlib
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np
import torch

Grid = Tuple[int, int, int]


def pixel_key(rgb: np.ndarray) -> bytes:
    """Content key of a frame: shape plus a 128-bit hash of its pixels."""
    digest = hashlib.blake2b(np.ascontiguousarray(rgb).tobytes(), digest_size=16)
    digest.update(repr(rgb.shape).encode())
    return digest.digest()


@dataclasses.dataclass
class VisionBlock:
    """One unit the vision tower encodes on its own: an image, or two frames of a video."""

    key: Hashable
    grid: Grid
    make_patches: Callable[[], np.ndarray]  # deferred so a cache hit skips resizing too

    @property
    def num_tokens(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclasses.dataclass
class BlockFeatures:
    embeds: torch.Tensor  # merged tokens [n, hidden]
    deepstack: List[torch.Tensor]  # one [n, hidden] per deepstack layer


class VisionFeatureCache:
    """Features by block key, pruned to the blocks of the latest query.

    ``encoder`` has :func:`encode_blocks`' signature; None means the model's own torch tower.
    """

    def __init__(self, enabled: bool = True, encoder: Optional[Callable] = None) -> None:
        self.enabled = enabled
        self.encoder = encoder
        self._store: Dict[Hashable, BlockFeatures] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._store)

    def clear(self) -> None:
        self._store.clear()

    def features(self, vision_model, blocks: Sequence[VisionBlock], merge_size: int,
                 device: torch.device) -> List[BlockFeatures]:
        """Features of every block, encoding the missing ones in one vision forward."""
        wanted = {b.key for b in blocks}
        missing: List[VisionBlock] = []
        seen = set()
        for block in blocks:
            if (not self.enabled or block.key not in self._store) and block.key not in seen:
                missing.append(block)
                seen.add(block.key)
        self.hits += len(blocks) - len(missing)
        self.misses += len(missing)
        encode = self.encoder or encode_blocks
        fresh = encode(vision_model, missing, merge_size, device) if missing else {}
        if self.enabled:
            self._store.update(fresh)
            for key in [k for k in self._store if k not in wanted]:
                del self._store[key]
            return [self._store[b.key] for b in blocks]
        return [fresh[b.key] for b in blocks]


def feature_source(cache: VisionFeatureCache, use_cache: bool) -> Optional[VisionFeatureCache]:
    """Return what a query without caching encodes through.

    None (raw pixels into the model) for the torch tower, else a non-caching view on the same
    external encoder, so ``use_cache=False`` still runs it.
    """
    if use_cache:
        return cache
    if cache.encoder is None:
        return None
    return VisionFeatureCache(enabled=False, encoder=cache.encoder)


def encode_blocks(vision_model, blocks: Sequence[VisionBlock], merge_size: int,
                  device: torch.device) -> Dict[Hashable, BlockFeatures]:
    """Run the Qwen3-VL vision tower over several independent blocks at once."""
    pixels = torch.from_numpy(np.concatenate([b.make_patches() for b in blocks], axis=0)).to(device)
    grid = torch.tensor([b.grid for b in blocks], dtype=torch.long, device=device)
    output = vision_model(pixels.to(vision_model.dtype), grid_thw=grid, return_dict=True)
    sizes = [b.num_tokens // (merge_size * merge_size) for b in blocks]
    embeds = torch.split(output.pooler_output, sizes)
    deepstack = [torch.split(layer, sizes) for layer in output.deepstack_features]
    return {b.key: BlockFeatures(embeds[i], [layer[i] for layer in deepstack]) for i, b in enumerate(blocks)}


def encoder_output(features: Sequence[BlockFeatures]):
    """Wrap features the way ``Qwen3VLModel.forward(mm_encoder_outputs=...)`` expects them."""
    from transformers.models.qwen3_vl.modeling_qwen3_vl import BaseModelOutputWithDeepstackFeatures
    layers = len(features[0].deepstack) if features else 0
    return BaseModelOutputWithDeepstackFeatures(
        pooler_output=tuple(f.embeds for f in features),
        deepstack_features=[tuple(f.deepstack[i] for f in features) for i in range(layers)])


def raw_pixels(blocks: Sequence[VisionBlock], device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
    """Pixels and grids for the uncached reference path (the model runs its own vision tower)."""
    pixels = torch.from_numpy(np.concatenate([b.make_patches() for b in blocks], axis=0)).to(device)
    grid = torch.tensor([b.grid for b in blocks], dtype=torch.long, device=device)
    return pixels, grid
