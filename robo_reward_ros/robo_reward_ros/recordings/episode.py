# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""An episode: camera frames, the task, and (when known) ground truth per frame.

Ground truth, per frame: the stage being worked on, whether that stage's success condition
holds, and a progress label in [0, 1] for that stage. Per episode: the outcome (``success``,
``partial`` or ``failure``), for failures what went wrong (``failure_kind``) and the frame index
where it went wrong (``failure_step``). Real videos usually have no per-frame truth
(``truth`` is None) and may have no outcome either ("").
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

from robo_reward_ros.core.frame import Frame

OUTCOMES = ("success", "partial", "failure")


@dataclasses.dataclass(frozen=True)
class FrameTruth:
    stage: int  # index of the stage being worked on at this frame
    success: bool  # the stage's success condition holds at this frame
    progress: float  # progress label of the stage, in [0, 1]


@dataclasses.dataclass
class Episode:
    name: str
    instructions: Tuple[str, ...]  # one per stage
    frames: List[Frame]  # stamps in seconds from the episode start
    truth: Optional[List[FrameTruth]] = None
    outcome: str = ""  # success | partial | failure | "" (unknown)
    failure_kind: str = ""  # noise | stall | drop | ... (failures only)
    failure_step: Optional[int] = None  # frame index where it went wrong (failures only)
    task: str = ""  # groups episodes of the same task (metrics are per task, then averaged)
    source: str = ""  # metaworld | video
    info: Dict[str, Any] = dataclasses.field(default_factory=dict)  # seed, env, ...

    def __post_init__(self) -> None:
        self.instructions = tuple(self.instructions)
        if not self.instructions:
            raise ValueError(f"episode {self.name}: at least one instruction is needed")
        if self.outcome and self.outcome not in OUTCOMES:
            raise ValueError(f"episode {self.name}: outcome must be one of {OUTCOMES}")
        if self.truth is not None and len(self.truth) != len(self.frames):
            raise ValueError(f"episode {self.name}: {len(self.truth)} truth rows for "
                             f"{len(self.frames)} frames")

    @property
    def stamps(self) -> List[float]:
        return [frame.stamp for frame in self.frames]

    @property
    def failure_stamp(self) -> Optional[float]:
        if self.failure_step is None:
            return None
        return self.frames[min(self.failure_step, len(self.frames) - 1)].stamp

    def success_stamp(self, stage: Optional[int] = None) -> Optional[float]:
        """First frame where the (last, by default) stage's success holds; None if never."""
        if self.truth is None:
            return None
        stage = len(self.instructions) - 1 if stage is None else stage
        for frame, row in zip(self.frames, self.truth):
            if row.stage == stage and row.success:
                return frame.stamp
        return None

    def metadata(self) -> Dict[str, Any]:
        """Episode-level facts (what the bag's /episode topic carries)."""
        return {"name": self.name, "instructions": list(self.instructions),
                "outcome": self.outcome, "failure_kind": self.failure_kind,
                "failure_step": self.failure_step, "task": self.task, "source": self.source,
                "frames": len(self.frames), "info": self.info}


def truth_at(episode: Episode, stamp: float) -> Optional[FrameTruth]:
    """Ground truth of the newest frame at or before ``stamp`` (None without truth)."""
    if episode.truth is None:
        return None
    index = _index_at(episode.stamps, stamp)
    return episode.truth[index]


def _index_at(stamps: Sequence[float], stamp: float) -> int:
    import bisect
    return max(0, bisect.bisect_right(stamps, stamp + 1e-9) - 1)
