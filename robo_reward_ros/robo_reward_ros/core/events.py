# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What goes into the task monitor (reward estimates) and what comes out (typed events).

The integer values of the enums are part of the message contract: the ROS messages in
``robo_reward_msgs`` carry the same constants, so the node copies ``int(kind)`` across unchanged.
"""
from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any, Dict, Optional, Tuple


class FailureKind(enum.IntEnum):
    """Why something went wrong; mirrors the ``KIND_*`` constants of the failure message."""

    REGRESSION = 1
    STALL = 2
    LOW_PROGRESS = 3
    TIMEOUT = 4
    CAMERA_STALE = 5
    MODEL_ERROR = 6
    EPISODE_LOG_ERROR = 7
    OPERATOR = 8

    @property
    def is_task_failure(self) -> bool:
        """Camera and model trouble say nothing about the robot, so they never fail the task."""
        return self not in (FailureKind.CAMERA_STALE, FailureKind.MODEL_ERROR,
                            FailureKind.EPISODE_LOG_ERROR)


class Severity(enum.IntEnum):
    """Mirrors ``SEVERITY_*``; a failure that ends the episode is always ERROR."""

    INFO = 0
    WARNING = 1
    ERROR = 2


class TaskStatus(enum.IntEnum):
    """Mirrors ``STATUS_*`` of the task state message."""

    IDLE = 0
    RUNNING = 1
    STAGE_SUCCEEDED = 2
    SUCCEEDED = 3
    FAILED = 4
    TIMED_OUT = 5
    PENDING = 6

    @property
    def ended(self) -> bool:
        """Whether an episode in this status has ended with an outcome (not idle, not running)."""
        return self in (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.TIMED_OUT)


class DecidedBy(enum.IntEnum):
    """Who decided a stage's or an episode's end; mirrors the constants of ``DecidedBy.msg``."""

    NONE = 0
    MODEL = 1
    OPERATOR = 2
    TIME_LIMIT = 3
    ABORT = 4


class DenseRewardMode(str, enum.Enum):
    """Selectable dense reward; the string values are the ROS parameter values."""

    PROGRESS = "progress"
    DELTA = "delta"
    POTENTIAL = "potential"


@dataclasses.dataclass(frozen=True)
class RewardEstimate:
    """One scoring of the current stage's frame window by one camera's reward model.

    ``stamp`` is the stamp (seconds) of the newest frame scored; the monitor measures all time in
    these stamps so that replays and bags behave like the live robot. ``progress`` and
    ``success_prob`` hold one value per scored frame, oldest first, aligned with
    ``frame_stamps``; ``success_prob`` is None for backends without a success head.
    """

    stamp: float
    camera: str
    progress: Tuple[float, ...]
    frame_stamps: Tuple[float, ...]
    success_prob: Optional[Tuple[float, ...]] = None
    backend: str = ""
    latency_s: float = 0.0

    def __post_init__(self) -> None:
        # Coerce sequences (lists, numpy arrays) to tuples of float so the estimate is hashable,
        # immutable and JSON-serialisable as is.
        object.__setattr__(self, "stamp", float(self.stamp))
        object.__setattr__(self, "progress", tuple(float(v) for v in self.progress))
        object.__setattr__(self, "frame_stamps", tuple(float(v) for v in self.frame_stamps))
        if self.success_prob is not None:
            object.__setattr__(self, "success_prob", tuple(float(v) for v in self.success_prob))
        if not self.progress:
            raise ValueError("RewardEstimate.progress must hold at least one frame")
        if len(self.frame_stamps) != len(self.progress):
            raise ValueError(
                f"RewardEstimate has {len(self.progress)} progress values but "
                f"{len(self.frame_stamps)} frame stamps"
            )
        if self.success_prob is not None and len(self.success_prob) != len(self.progress):
            raise ValueError(
                f"RewardEstimate has {len(self.progress)} progress values but "
                f"{len(self.success_prob)} success probabilities"
            )
        values = (self.stamp, self.latency_s) + self.progress + self.frame_stamps
        values += self.success_prob or ()
        if not all(math.isfinite(v) for v in values):
            raise ValueError("RewardEstimate holds a non-finite value (report it as a model error)")
        if any(b < a for a, b in zip(self.frame_stamps, self.frame_stamps[1:])):
            raise ValueError("RewardEstimate.frame_stamps must be non-decreasing")

    @property
    def last_progress(self) -> float:
        """Progress at the newest frame, clipped to [0, 1] (upstream reads ``progress[-1]``)."""
        return min(1.0, max(0.0, self.progress[-1]))

    @property
    def last_success_prob(self) -> Optional[float]:
        if self.success_prob is None:
            return None
        return min(1.0, max(0.0, self.success_prob[-1]))

    def to_record(self) -> Dict[str, Any]:
        record = dataclasses.asdict(self)
        record["type"] = "estimate"
        return record


@dataclasses.dataclass(frozen=True)
class MonitorEvent:
    """Common fields: every event belongs to one episode and one stage at one frame stamp."""

    stamp: float
    episode_id: str
    stage_index: int

    def to_record(self) -> Dict[str, Any]:
        record: Dict[str, Any] = {"type": type(self).__name__}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, enum.Enum):
                # Keep the wire value and a readable name side by side in the log.
                record[field.name + "_name"] = value.name
                value = value.value
            record[field.name] = value
        return record


@dataclasses.dataclass(frozen=True)
class EpisodeStarted(MonitorEvent):
    instruction: str
    num_stages: int


@dataclasses.dataclass(frozen=True)
class StageSucceeded(MonitorEvent):
    """``score`` is the evidence on the last vote (success probability, or progress).

    ``reason`` says which rule fired, for the task state message.
    """

    instruction: str
    score: float
    cameras: Tuple[str, ...]
    reason: str = ""
    decided_by: DecidedBy = DecidedBy.MODEL
    decider: str = ""  # the operator's name for DecidedBy.OPERATOR


@dataclasses.dataclass(frozen=True)
class StageAdvanced(MonitorEvent):
    """The caller must switch to ``instruction`` and drop every frame stamped at or before ``window_start_stamp``.

    Those frames belong to the finished stage.
    """

    instruction: str
    window_start_stamp: float


@dataclasses.dataclass(frozen=True)
class DecisionPending(MonitorEvent):
    """The model decided (a success, or a failure that would end the episode) and waits for an operator.

    Confirmation mode (``MonitorConfig.confirm_decisions``): nothing ends until an operator confirms
    or vetoes, or ``timeout_s`` of frame time passes.
    """

    success: bool
    reason: str
    timeout_s: float


@dataclasses.dataclass(frozen=True)
class VerifierChecked(MonitorEvent):
    """A second model's answer on a decision the first one was unsure of (``success.verifier.*``).

    ``model_value`` is what put the decision in the band (the first model's success probability,
    or its progress without a success head); ``value`` the verifier's reading of the same windows
    (None when it failed: then the first model's decision stands, and ``error`` says why).
    ``confirmed``: a success at or over ``threshold``, a failure under it.
    """

    success: bool  # the decision checked: a stage success, else a terminal failure
    model_value: float
    value: Optional[float]
    threshold: float
    confirmed: bool
    latency_s: float
    backend: str
    error: str = ""


@dataclasses.dataclass(frozen=True)
class FailureDetected(MonitorEvent):
    """``value`` and ``threshold`` are the numbers behind the decision, for plots and alerts.

    ``progress`` is the stage progress when it was detected (None before the first estimate).
    """

    kind: FailureKind
    severity: Severity
    terminal: bool
    description: str
    value: Optional[float] = None
    threshold: Optional[float] = None
    camera: str = ""
    progress: Optional[float] = None
    decided_by: DecidedBy = DecidedBy.NONE  # who decided a terminal one
    decider: str = ""

    @property
    def task_failure(self) -> bool:
        return self.kind.is_task_failure


@dataclasses.dataclass(frozen=True)
class EpisodeEnded(MonitorEvent):
    """The one terminal event of an episode; ``failure_kind`` is 0 unless a failure ended it."""

    status: TaskStatus
    reason: str
    reset_requested: bool
    failure_kind: int = 0
    stages_completed: int = 0
    decided_by: DecidedBy = DecidedBy.MODEL
    decider: str = ""


@dataclasses.dataclass(frozen=True)
class RewardStep:
    """One decision of an episode, for an RL controller: exactly one per inference step.

    The cameras scored in the step are fused into it (mean progress over the live cameras, the
    camera rule for success), so the reward does not grow with the number of cameras. Gymnasium's
    meaning: ``terminated`` when the task reached a terminal state (the last stage succeeded, or a
    failure configured as terminal), ``truncated`` when the episode was cut short (a time limit, or
    an abort: operator stop, task change, shutdown). The step that ends an episode carries its
    bonus; every episode has exactly one step with either flag set. ``stamp`` is the newest frame
    stamp the step covers (the episode clock for a step with no estimate, a timer's or an abort's).
    """

    stamp: float
    episode_id: str
    step_index: int
    stage_index: int
    num_stages: int
    instruction: str
    progress: float
    task_progress: float
    reward: float
    episode_return: float
    success_prob: Optional[float]
    stage_succeeded: bool
    terminated: bool
    truncated: bool
    status: TaskStatus
    cameras: Tuple[str, ...] = ()
    reason: str = ""  # why the episode ended, on the terminal step
    intervened: bool = False  # an operator was in control: a demonstration transition
    decided_by: DecidedBy = DecidedBy.NONE  # who decided what this step ended
    decider: str = ""
    verifier: Optional[VerifierChecked] = None  # the second opinion this step applied, if any

    @property
    def terminal(self) -> bool:
        return self.terminated or self.truncated
