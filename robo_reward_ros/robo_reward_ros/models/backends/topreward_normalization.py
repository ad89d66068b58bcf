# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Turning TOPReward's raw log P("True") into progress in [0, 1].

Hindsight (the paper, offline): min-max over every prefix of the finished episode, interpolated
onto frames. A robot cannot see the future, so online use needs a causal rule:

Causal running min-max: after each step, progress = (r_t - min_{s<=t} r_s) / max(max_{s<=t} r_s -
min_{s<=t} r_s, min_span), clipped to [0, 1]. It only uses past values, starts at 0, and reaches the
hindsight value on any step that sets a new episode maximum. ``min_span`` (nats) keeps early,
nearly constant log-probs from being stretched to the full [0, 1] range. With ``ceiling`` set, the
upper anchor is that fixed log-probability instead of the running maximum (log 1 = 0 is the
natural bound; a value calibrated on recorded successes is better), so progress never jumps to 1
merely because the episode has not improved yet.
"""
from typing import List, Optional, Sequence

import numpy as np


def hindsight_minmax(rewards: Sequence[float]) -> np.ndarray:
    """Per-episode min-max; one value gives [1], a constant series gives ones (upstream)."""
    values = np.asarray(rewards, dtype=np.float64)
    if values.size <= 1:
        return np.ones_like(values)
    low, high = values.min(), values.max()
    if high - low <= 0:
        return np.ones_like(values)
    return (values - low) / (high - low)


def hindsight_progress(prefix_lengths: Sequence[int], rewards: Sequence[float], num_frames: int) -> np.ndarray:
    """Normalised prefix rewards interpolated onto frames 1..N and clipped (Robometer's baseline)."""
    normalised = hindsight_minmax(rewards)
    frames = np.arange(1, num_frames + 1, dtype=np.float64)
    return np.clip(np.interp(frames, np.asarray(prefix_lengths, dtype=np.float64), normalised), 0.0, 1.0)


def prefix_lengths(num_frames: int, num_samples: int = 15) -> List[int]:
    """Upstream schedule: sorted unique linspace(1, N, min(15, N)) for N > 2, [N] otherwise."""
    if num_frames <= 0:
        raise ValueError("num_frames must be positive")
    if num_samples <= 0:
        return list(range(1, num_frames + 1))
    if num_frames <= 2:
        return [num_frames]
    return sorted(set(int(x) for x in np.linspace(1, num_frames, min(num_samples, num_frames), dtype=int)))


class CausalMinMax:
    """Streaming normaliser for one episode (see module docstring)."""

    def __init__(self, min_span: float = 0.5, ceiling: Optional[float] = None) -> None:
        if min_span <= 0:
            raise ValueError("min_span must be positive")
        self.min_span = float(min_span)
        self.ceiling = ceiling
        self.reset()

    def reset(self) -> None:
        self.low = np.inf
        self.high = -np.inf

    def update(self, reward: float) -> float:
        self.low = min(self.low, reward)
        self.high = max(self.high, reward)
        top = self.high if self.ceiling is None else max(self.ceiling, self.low)
        span = max(top - self.low, self.min_span)
        return float(np.clip((reward - self.low) / span, 0.0, 1.0))
