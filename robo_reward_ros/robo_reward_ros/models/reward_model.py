# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The one interface every reward backend implements, and the data it exchanges.

The node, the offline tools and the tests only see these types, so a backend can be swapped by a
parameter without the task monitor knowing which model produced the numbers.
"""
import abc
import dataclasses
from typing import Any, Dict, FrozenSet, List, Optional, Sequence

import numpy as np

from robo_reward_ros.core.frame import Frame  # noqa: F401  (re-exported: part of the model interface)


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What a backend outputs, so the monitor uses only what is there."""

    progress: bool = True
    success: bool = False
    preference: bool = False


@dataclasses.dataclass
class ModelOutput:
    """Per-frame outputs of one reward query.

    ``progress[i]`` (and ``success[i]`` when present) belong to the frame taken at ``stamps[i]``;
    ``progress[-1]`` is the reward for the newest frame. ``input_stamps`` are the frames the model
    saw (after frame selection and padding), which may be more than the frames that get a value.
    """

    progress: np.ndarray
    stamps: np.ndarray
    backend: str
    success: Optional[np.ndarray] = None
    input_stamps: Optional[np.ndarray] = None
    extras: Dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.progress = np.asarray(self.progress, dtype=np.float32)
        self.stamps = np.asarray(self.stamps, dtype=np.float64)
        if self.input_stamps is not None:
            self.input_stamps = np.asarray(self.input_stamps, dtype=np.float64)
        if self.progress.shape != self.stamps.shape:
            raise ValueError(f"progress {self.progress.shape} and stamps {self.stamps.shape} differ")
        if self.success is not None:
            self.success = np.asarray(self.success, dtype=np.float32)
            if self.success.shape != self.progress.shape:
                raise ValueError(f"success {self.success.shape} and progress {self.progress.shape} differ")


def check_frames(frames: Sequence[Frame]) -> None:
    """Reject input the vision preprocessing would silently misread."""
    if len(frames) == 0:
        raise ValueError("at least one frame is needed")
    for frame in frames:
        rgb = frame.rgb
        if not isinstance(rgb, np.ndarray) or rgb.ndim != 3 or rgb.shape[2] != 3:
            raise ValueError(f"frame at {frame.stamp} must be an HxWx3 array, got {getattr(rgb, 'shape', type(rgb))}")
        if rgb.dtype != np.uint8:
            raise ValueError(f"frame at {frame.stamp} must be uint8 RGB, got {rgb.dtype}")


class RewardModel(abc.ABC):
    """A vision-language reward model behind one interface.

    Backends keep per-episode state (feature caches, TOPReward's causal normaliser), so the owner
    calls :meth:`reset` at episode or stage boundaries and :meth:`close` to free the weights.
    Everything a caller may ask of a backend is declared here with a default, so a plugin backend
    implements :meth:`score` and overrides only what it does differently.
    """

    name: str = "reward_model"
    capabilities: Capabilities = Capabilities()
    max_aspect_ratio: Optional[float] = None  # longest:shortest side a frame may have (None: any)
    # Frames one query takes (None: any number); the node refuses a window that holds fewer.
    max_frames: Optional[int] = None
    # Where the weights run (a torch.device, "cpu"); None where that is not this process's to say
    # (a remote server), and the caller reports the device it asked for.
    device: Optional[Any] = None
    # True when score_batch puts the clips into one forward: the caller then times them as one.
    batches_clips: bool = False

    @abc.abstractmethod
    def score(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        """Score a chronological window of frames against the instruction."""

    def score_batch(self, instruction: str, clips: Sequence[Sequence[Frame]]) -> List[ModelOutput]:
        """Score several cameras' windows at once; by default one after the other."""
        return [self.score(instruction, clip) for clip in clips]

    def score_episode(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        """Score a whole recorded episode offline; a backend that can use hindsight overrides it (TOPReward)."""
        return self.score(instruction, frames)

    def prefer(self, instruction: str, clip_a: Sequence[Frame], clip_b: Sequence[Frame]) -> float:
        """Probability that clip A makes more progress on the instruction than clip B."""
        raise NotImplementedError(f"{self.name} does not compare two clips")

    def reserved_texts(self) -> FrozenSet[str]:
        """Texts an instruction must not contain: the model's tokenizer reads them as control tokens.

        An instruction holding one (``<|im_end|>`` opening a chat turn, an image placeholder, a
        scoring token) would change the prompt itself; the node refuses such instructions.
        """
        return frozenset()

    def frame_problem(self, height: int, width: int) -> str:
        """Why a frame of this size cannot be scored ("" when it can); checked as frames arrive.

        By default a frame longer than ``max_aspect_ratio`` times its width (or the reverse): the
        Qwen3-VL image processor refuses those, and one such frame would fail every window it is in.
        """
        ratio = max(height, width) / max(1, min(height, width))
        if self.max_aspect_ratio is not None and ratio > self.max_aspect_ratio:
            return (f"frame {width}x{height} has an aspect ratio of {ratio:.0f}:1; {self.name} scores "
                    f"at most {self.max_aspect_ratio:.0f}:1")
        return ""

    def reset(self) -> None:
        """Forget per-episode state; the weights stay loaded."""

    def close(self) -> None:
        """Release the weights and any accelerator memory."""
