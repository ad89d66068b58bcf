"""A list of frames as a Qwen3-VL video: two-frame blocks with their timestamps and pixels."""
from typing import List, Optional, Sequence, Tuple

import numpy as np

from robo_reward_ros.models.qwen.processing import VideoBlock, VisionSettings, video_timestamps
from robo_reward_ros.models.qwen.vision_feature_cache import VisionBlock, pixel_key
from robo_reward_ros.models.qwen.vision_preprocessing import normalize, patchify_frames, resize_rgb


def pad_to_temporal_patch(frames: Sequence[np.ndarray], temporal_patch_size: int) -> List[np.ndarray]:
    """Repeat the last frame until the count fills whole temporal patches (qwen-vl-utils)."""
    frames = list(frames)
    while len(frames) % temporal_patch_size:
        frames.append(frames[-1])
    return frames


def video_blocks(frames_rgb: Sequence[np.ndarray], size: Tuple[int, int], settings: VisionSettings,
                 frame_indices: Sequence[int], fps: float, keys: Optional[Sequence[bytes]] = None):
    """Vision blocks (cache units), prompt blocks (timestamps, token counts) and whole-clip patches.

    ``frames_rgb`` are resized to ``size`` (h, w) with PIL bicubic; the last frame is repeated to an
    even count. The whole-clip patches/grid are what the processor gives for the same frames, used by
    the uncached reference path (a function: only that path pays for it). ``keys``: the frames'
    ``pixel_key``s when the caller already has them.
    """
    height, width = size
    tp = settings.temporal_patch_size
    frames = pad_to_temporal_patch(frames_rgb, tp)
    keys = pad_to_temporal_patch(keys, tp) if keys is not None else [pixel_key(f) for f in frames]

    def chw(rgb: np.ndarray) -> np.ndarray:
        return normalize(resize_rgb(rgb, height, width), settings.mean, settings.std)

    grid = (1, height // settings.patch_size, width // settings.patch_size)
    merge = settings.merge_size ** 2
    times = video_timestamps(list(frame_indices), fps, tp)
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
