# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A list of frames as a Qwen3-VL video: two-frame blocks with their timestamps and pixels."""
from typing import Callable, Optional, Sequence, Tuple

import numpy as np

from robo_reward_ros.models.qwen.processing import VideoBlock, VisionSettings, block_timestamps, pad_to_temporal_patch
from robo_reward_ros.models.qwen.vision_feature_cache import VisionBlock, pixel_key
from robo_reward_ros.models.qwen.vision_preprocessing import normalize, patchify_frames, resize_rgb

Resize = Callable[[np.ndarray, int, int], np.ndarray]


def video_blocks(frames_rgb: Sequence[np.ndarray], size: Tuple[int, int], settings: VisionSettings,
                 frame_times: Sequence[float], keys: Optional[Sequence[bytes]] = None, resize: Resize = resize_rgb):
    """Vision blocks (cache units), prompt blocks (timestamps, token counts) and whole-clip patches.

    ``frames_rgb`` are resized to ``size`` (h, w) by ``resize`` (PIL bicubic unless the backend's
    reference resizes otherwise); the last frame, and its time in ``frame_times`` (seconds), is
    repeated to an even count, as the Qwen3-VL processor does. The whole-clip patches/grid are what
    the processor gives for the same frames, used by the uncached reference path (a function: only
    that path pays for it). ``keys``: the frames' ``pixel_key``s when the caller already has them.
    """
    height, width = size
    tp = settings.temporal_patch_size
    frames = pad_to_temporal_patch(frames_rgb, tp)
    keys = pad_to_temporal_patch(keys, tp) if keys is not None else [pixel_key(f) for f in frames]

    def chw(rgb: np.ndarray) -> np.ndarray:
        return normalize(resize(rgb, height, width), settings.mean, settings.std)

    grid = (1, height // settings.patch_size, width // settings.patch_size)
    merge = settings.merge_size ** 2
    times = block_timestamps(frame_times, tp)
    vision, prompt = [], []
    for number, start in enumerate(range(0, len(frames), tp)):
        members = frames[start:start + tp]

        def make(members=members) -> np.ndarray:
            return patchify_frames([chw(m) for m in members], settings.patch_size, settings.merge_size, tp)[0]

        vision.append(VisionBlock(key=(tuple(keys[start:start + tp]), height, width), grid=grid, make_patches=make))
        prompt.append(VideoBlock(timestamp=times[number], num_tokens=grid[1] * grid[2] // merge))

    def whole_clip() -> Tuple[np.ndarray, Tuple[int, int, int]]:
        return patchify_frames([chw(f) for f in frames], settings.patch_size, settings.merge_size, tp)

    return vision, prompt, whole_clip
