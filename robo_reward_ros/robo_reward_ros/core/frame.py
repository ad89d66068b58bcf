# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The unit every part of the pipeline passes around: one camera image and its stamp."""
import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Frame:
    """One camera image with the time it was taken (seconds: frame stamps, not wall time)."""

    stamp: float
    rgb: np.ndarray  # HxWx3 uint8, RGB order


# Frames one query may carry per clip (a preference trajectory, a reward-server clip): more than
# any backend looks at (it selects at most a few) and a bound on what one query may decode.
MAX_FRAMES_PER_CLIP = 64
