"""The unit every part of the pipeline passes around: one camera image and its stamp."""
import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Frame:
    """One camera image with the time it was taken (seconds: frame stamps, not wall time)."""

    stamp: float
    rgb: np.ndarray  # HxWx3 uint8, RGB order
