# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Pixel preparation for Qwen3-VL, without torchvision.

Image resizing follows qwen-vl-utils (``smart_resize`` + PIL bicubic), which the references call
before the processor with ``do_resize=False`` (reward-models.md 1.5, 2); transformers' own
``smart_resize`` differs for tiny sides (no lower bound of one factor), so it is written here.
Video frames resized by torchvision in the references use ``resize_rgb_antialiased`` (torch only).
Images are normalised and patchified by transformers' Qwen2-VL image processor (its PIL backend,
no torchvision). Video blocks are written here (``normalize`` + ``patchify_frames``) because
transformers' Qwen3-VL video processor needs torchvision; a test checks them against the image
processor.
"""
import functools
import math
from typing import List, Sequence, Tuple

import numpy as np
from PIL import Image


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> Tuple[int, int]:
    """Both sides a multiple of ``factor``, area within [min_pixels, max_pixels], aspect kept."""
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio must be below 200, got {height}x{width}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def video_smart_resize(num_frames: int, height: int, width: int, factor: int, temporal_factor: int,
                       min_pixels: int, max_pixels: int) -> Tuple[int, int]:
    """Compute transformers' Qwen3-VL video resize: the pixel budget counts all frames of the clip."""
    if height < factor or width < factor:
        scale = max(factor / height, factor / width)
        height, width = int(height * scale), int(width * scale)
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    t_bar = max(temporal_factor, round(num_frames / temporal_factor) * temporal_factor)
    if t_bar * h_bar * w_bar > max_pixels:
        beta = math.sqrt((num_frames * height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif t_bar * h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (num_frames * height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def resize_rgb(rgb: np.ndarray, height: int, width: int) -> np.ndarray:
    """PIL bicubic resize of a uint8 RGB array (a no-op when the size already matches)."""
    if rgb.shape[0] == height and rgb.shape[1] == width:
        return rgb
    return np.asarray(Image.fromarray(rgb, mode="RGB").resize((width, height), Image.BICUBIC))


def resize_rgb_antialiased(rgb: np.ndarray, height: int, width: int, via_float: bool = False) -> np.ndarray:
    """Bicubic resize with antialiasing of a uint8 RGB array, as torchvision resizes tensors on CPU.

    torchvision's ``transforms.v2`` resize (transformers' video processor) hands uint8 straight to
    ``torch.nn.functional.interpolate(mode="bicubic", antialias=True)``; the older
    ``transforms.functional.resize`` (qwen-vl-utils' ``fetch_video``) interpolates in float32, then
    clamps and rounds (``via_float``). The two differ by up to one level; torch alone gives either.
    """
    if rgb.shape[0] == height and rgb.shape[1] == width:
        return rgb
    import torch
    tensor = torch.from_numpy(np.array(rgb, dtype=np.uint8, order="C")).permute(2, 0, 1).unsqueeze(0)
    if via_float:
        tensor = tensor.float()
    resized = torch.nn.functional.interpolate(tensor, size=(height, width), mode="bicubic", align_corners=False,
                                              antialias=True)
    if via_float:
        resized = resized.clamp_(0, 255).round_().to(torch.uint8)
    return resized[0].permute(1, 2, 0).contiguous().numpy()


def normalize(rgb: np.ndarray, mean: Sequence[float], std: Sequence[float], rescale: float = 1 / 255) -> np.ndarray:
    """uint8 HWC -> float32 CHW, rescaled and normalised as the Qwen processors do."""
    image = rgb.astype(np.float32) * np.float32(rescale)
    image = (image - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return np.ascontiguousarray(image.transpose(2, 0, 1))


def patchify_frames(frames_chw: List[np.ndarray], patch_size: int, merge_size: int,
                    temporal_patch_size: int) -> Tuple[np.ndarray, Tuple[int, int, int]]:
    """Flatten frames of one clip into Qwen vision patches and the (t, h, w) grid.

    A single frame is repeated over the temporal patch (image layout); several frames are padded to
    a multiple of the temporal patch with the last frame (video layout). Patch order is
    (t, h/merge, w/merge, merge, merge) and each patch is (C, temporal, patch, patch).
    """
    video = np.stack(frames_chw, axis=0)
    if video.shape[0] == 1:
        video = np.repeat(video, temporal_patch_size, axis=0)
    pad = -video.shape[0] % temporal_patch_size
    if pad:
        video = np.concatenate([video, np.repeat(video[-1:], pad, axis=0)], axis=0)
    frames, channel, height, width = video.shape
    grid_t, grid_h, grid_w = frames // temporal_patch_size, height // patch_size, width // patch_size
    patches = video.reshape(grid_t, temporal_patch_size, channel, grid_h // merge_size, merge_size, patch_size,
                            grid_w // merge_size, merge_size, patch_size)
    patches = patches.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    flat = patches.reshape(grid_t * grid_h * grid_w, channel * temporal_patch_size * patch_size * patch_size)
    return np.ascontiguousarray(flat), (grid_t, grid_h, grid_w)


def image_patches(rgb: np.ndarray, patch_size: int, merge_size: int, temporal_patch_size: int,
                  mean: Sequence[float], std: Sequence[float]) -> np.ndarray:
    """Vision patches of one image already at its final size, from transformers' Qwen2-VL image processor.

    The image is repeated over the temporal patch.
    """
    processor = _image_processor(patch_size, merge_size, temporal_patch_size, tuple(mean), tuple(std))
    return processor(images=[rgb], return_tensors="np")["pixel_values"]


@functools.lru_cache(maxsize=4)
def _image_processor(patch_size: int, merge_size: int, temporal_patch_size: int,
                     mean: Tuple[float, ...], std: Tuple[float, ...]):
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
    return Qwen2VLImageProcessorPil(patch_size=patch_size, merge_size=merge_size,
                                    temporal_patch_size=temporal_patch_size, image_mean=list(mean),
                                    image_std=list(std), do_resize=False)
