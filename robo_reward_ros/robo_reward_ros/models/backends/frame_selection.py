# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Which frames of a window the model sees (Robometer contract, reward-models.md section 1.6).

Upstream ``linspace_subsample_frames`` is the default. LeRobot's ``compute_reward`` instead keeps
the last K frames; it is offered as ``mode="tail"`` because it gives the newest frames full
temporal resolution at the cost of forgetting the episode start. Neither pads a short window at
inference; the published training loaders do (``pad=True``).
"""
from typing import List, Sequence, TypeVar

import numpy as np

T = TypeVar("T")

MODES = ("linspace", "tail")


def linspace_indices(num_frames: int, count: int) -> List[int]:
    """Return indices of ``count`` frames out of ``num_frames``, first and last kept, non-decreasing.

    Rounds with ``np.rint`` (half to even) as upstream does; with fewer frames than ``count`` all
    frames are used and the caller pads.
    """
    if num_frames <= 0:
        raise ValueError("num_frames must be positive")
    if count <= 0:
        raise ValueError("count must be positive")
    if count == 1:
        return [num_frames - 1]
    if num_frames <= count:
        return list(range(num_frames))
    indices = np.rint(np.linspace(0, num_frames - 1, count)).astype(np.int64)
    indices[0] = 0
    indices[-1] = num_frames - 1
    indices = np.maximum.accumulate(indices)
    return [int(i) for i in indices]


def tail_indices(num_frames: int, count: int) -> List[int]:
    """Return the indices of the last ``count`` frames (LeRobot ``compute_reward``)."""
    if num_frames <= 0 or count <= 0:
        raise ValueError("num_frames and count must be positive")
    return list(range(max(0, num_frames - count), num_frames))


def select_frames(frames: Sequence[T], count: int = 8, mode: str = "linspace", pad: bool = False) -> List[T]:
    """Pick at most ``count`` frames.

    A shorter window is used as it is, as the published inference code and LeRobot do; ``pad``
    right-pads it to ``count`` by repeating the last frame, as the published training data loaders do.
    """
    if mode == "linspace":
        indices = linspace_indices(len(frames), count)
    elif mode == "tail":
        indices = tail_indices(len(frames), count)
    else:
        raise ValueError(f"frame selection mode must be one of {MODES}, got {mode!r}")
    chosen = [frames[i] for i in indices]
    if pad and len(chosen) < count:
        chosen.extend([chosen[-1]] * (count - len(chosen)))
    return chosen
