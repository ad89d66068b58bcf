# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A deterministic tabletop scene drawn with numpy: a camera stream that needs no simulator, no download and no GPU.

It is for the demo and for tests of the ROS plumbing.

A gripper (dark square) moves to a red block, carries it to a green goal and stays there; one
episode takes ``episode_frames`` frames and then repeats.
"""
from __future__ import annotations

import numpy as np

_TABLE = np.array([205, 185, 150], dtype=np.uint8)
_BLOCK = np.array([200, 30, 30], dtype=np.uint8)
_GOAL = np.array([40, 170, 60], dtype=np.uint8)
_GRIPPER = np.array([40, 40, 50], dtype=np.uint8)


def scene_progress(frame_index: int, episode_frames: int) -> float:
    """Ground-truth task progress in [0, 1] of the scene at a frame (for plots and checks)."""
    phase = (frame_index % episode_frames) / max(episode_frames - 1, 1)
    return float(min(1.0, phase / 0.8))


def render_scene(frame_index: int, width: int, height: int, episode_frames: int = 150) -> np.ndarray:
    """RGB uint8 (height, width, 3) image of the scene at ``frame_index``."""
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = _TABLE
    size = max(4, min(width, height) // 10)
    start = np.array([0.15 * width, 0.2 * height])
    block = np.array([0.35 * width, 0.7 * height])
    goal = np.array([0.8 * width, 0.5 * height])
    progress = scene_progress(frame_index, episode_frames)
    _fill(image, goal, int(size * 1.6), _GOAL)
    if progress < 0.4:  # reach the block
        gripper = start + (block - start) * (progress / 0.4)
        block_pos = block
    else:  # carry it to the goal
        block_pos = block + (goal - block) * ((progress - 0.4) / 0.6)
        gripper = block_pos
    _fill(image, block_pos, size, _BLOCK)
    _fill(image, gripper + np.array([0.0, -size]), size // 2 + 1, _GRIPPER)
    return image


def _fill(image: np.ndarray, center: np.ndarray, half: int, color: np.ndarray) -> None:
    height, width = image.shape[:2]
    x, y = int(round(center[0])), int(round(center[1]))
    image[max(0, y - half):min(height, y + half), max(0, x - half):min(width, x + half)] = color
