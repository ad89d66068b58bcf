# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Token sequences with their vision blocks, collated into one right-padded Qwen3-VL batch."""
import dataclasses
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from robo_reward_ros.models.qwen.vision_feature_cache import VisionBlock, VisionFeatureCache, encoder_output, raw_pixels


@dataclasses.dataclass
class QwenSequence:
    """One prompt: token ids, modality types, and the vision blocks its placeholders stand for."""

    input_ids: np.ndarray
    mm_token_type_ids: np.ndarray
    blocks: List[VisionBlock]
    modality: str  # "image" or "video"
    # For the uncached reference path of a video: the whole clip as the processor would give it
    # (several videos: their patches concatenated and a list of their grids).
    video_patches: Optional[np.ndarray] = None
    video_grid: Optional[Union[tuple, List[tuple]]] = None
    # Or a function giving (patches, grid), called on first use: the cached path never needs the
    # whole clip's pixels, so a streaming step does not resize and normalise every frame again.
    video_source: Optional[Callable[[], Tuple[np.ndarray, tuple]]] = None

    def whole_video(self) -> Tuple[np.ndarray, tuple]:
        """Return the whole clip's patches and grid (computed once, from ``video_source`` if not given)."""
        if self.video_patches is None and self.video_source is not None:
            self.video_patches, self.video_grid = self.video_source()
            self.video_source = None
        return self.video_patches, self.video_grid


def collate(sequences: Sequence[QwenSequence], pad_id: int, device: torch.device) -> Dict[str, torch.Tensor]:
    """Right-pad ids (reward-models.md 1.7: sequences use right padding) and build the mask."""
    length = max(len(s.input_ids) for s in sequences)
    ids = np.full((len(sequences), length), pad_id, dtype=np.int64)
    types = np.zeros_like(ids)
    mask = np.zeros_like(ids)
    for row, seq in enumerate(sequences):
        n = len(seq.input_ids)
        ids[row, :n] = seq.input_ids
        types[row, :n] = seq.mm_token_type_ids
        mask[row, :n] = 1
    return {"input_ids": torch.from_numpy(ids).to(device), "mm_token_type_ids": torch.from_numpy(types).to(device),
            "attention_mask": torch.from_numpy(mask).to(device)}


def vision_inputs(qwen_model, sequences: Sequence[QwenSequence], cache: Optional[VisionFeatureCache],
                  merge_size: int, device: torch.device) -> Dict[str, object]:
    """Keyword arguments for ``Qwen3VLModel.forward``: cached encoder outputs, or raw pixels.

    Both carry the per-block grids, so mRoPE positions are the same either way.
    """
    modality = sequences[0].modality
    blocks = [b for s in sequences for b in s.blocks]
    grid_name = "image_grid_thw" if modality == "image" else "video_grid_thw"
    if cache is not None:
        grid = torch.tensor([b.grid for b in blocks], dtype=torch.long, device=device)
        features = cache.features(qwen_model.visual, blocks, merge_size, device)
        return {grid_name: grid, "mm_encoder_outputs": {modality: encoder_output(features)}}
    if modality == "image":
        pixels, grid = raw_pixels(blocks, device)
        return {"pixel_values": pixels, "image_grid_thw": grid}
    wholes = [s.whole_video() for s in sequences]
    pixels = torch.from_numpy(np.concatenate([patches for patches, _ in wholes], axis=0)).to(device)
    # A sequence of several videos (a pair) gives one grid per video.
    grids = [g for _, grid in wholes for g in (grid if isinstance(grid, list) else [grid])]
    grid = torch.tensor(grids, dtype=torch.long, device=device)
    return {"pixel_values_videos": pixels, "video_grid_thw": grid}
