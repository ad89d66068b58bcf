# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A task as the node and the offline tools see it: ordered stages with optional limits.

Validation lives here, not in the ROS shell, so a bad task is refused with the same message
whether it came from a topic, a service, a parameter or a bag.
"""
from __future__ import annotations

import dataclasses
import math
from typing import AbstractSet, List, Optional, Sequence

from robo_reward_ros.core.log_text import escape_controls, has_visible_character


@dataclasses.dataclass(frozen=True)
class Stage:
    """One instruction to score; ``None`` limits mean "use the node's default"."""

    instruction: str
    timeout_sec: Optional[float] = None
    success_threshold: Optional[float] = None


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    stages: tuple
    episode_timeout_sec: Optional[float] = None

    @property
    def stage_count(self) -> int:
        return len(self.stages)


# Instructions are one sentence or a few; a longer text is a mistake (a file pasted into the
# topic) and would crowd the frames out of the model's context.
MAX_INSTRUCTION_CHARS = 1000


class InvalidTaskError(ValueError):
    """The task cannot be run; the message says which part and why."""


def build_task(
    instructions: Sequence[str],
    stage_timeouts_sec: Optional[Sequence[float]] = None,
    success_thresholds: Optional[Sequence[float]] = None,
    episode_timeout_sec: Optional[float] = None,
) -> TaskSpec:
    """Make a validated task; zero (or absent) limits mean "node default", as in TaskSpec.msg."""
    if len(instructions) == 0:
        raise InvalidTaskError("a task needs at least one stage; got zero stages")
    stages: List[Stage] = []
    for index, raw in enumerate(instructions):
        text = _check_instruction(f"stage {index + 1}", raw)
        timeout = _optional_positive(
            stage_timeouts_sec[index] if stage_timeouts_sec else 0.0,
            f"stage {index + 1} timeout_sec")
        threshold = _optional_positive(
            success_thresholds[index] if success_thresholds else 0.0,
            f"stage {index + 1} success_threshold")
        if threshold is not None and threshold > 1.0:
            raise InvalidTaskError(
                f"stage {index + 1} success_threshold must be in (0, 1], got {threshold}")
        stages.append(Stage(text, timeout, threshold))
    return TaskSpec(tuple(stages), _optional_positive(episode_timeout_sec or 0.0,
                                                      "episode_timeout_sec"))


def check_task_for_model(task: TaskSpec, max_stages: int, reserved_texts: AbstractSet[str]) -> None:
    """Refuse (InvalidTaskError, with the reason) a task the node must not run on this model.

    More stages than ``max_stages``, or an instruction holding a special token of the model's
    tokenizer: it would rewrite the prompt (a chat turn, an image placeholder, a scoring token).
    """
    if task.stage_count > max_stages:
        raise InvalidTaskError(f"the task has {task.stage_count} stages; at most {max_stages} are "
                               f"accepted (parameter task.max_stages)")
    for index, stage in enumerate(task.stages):
        _check_reserved(f"stage {index + 1}", stage.instruction, reserved_texts)


def check_instruction(raw, reserved_texts: AbstractSet[str], owner: str = "the request") -> str:
    """Check an instruction that comes without a task (a preference query, a reward-server request).

    Checked as a task's stage is, so every way in (topic, service, parameter, server) refuses the
    same texts with the same reasons; ``owner`` names it in the message.
    """
    text = _check_instruction(owner, raw)
    _check_reserved(owner, text, reserved_texts)
    return text


def _check_reserved(owner: str, instruction: str, reserved_texts: AbstractSet[str]) -> None:
    found = sorted(text for text in reserved_texts if text in instruction)
    if found:
        raise InvalidTaskError(
            f"{owner} instruction contains {', '.join(repr(t) for t in found[:3])}: special "
            f"token(s) of the model's tokenizer, which would change the model's prompt")


def describe_task(task: TaskSpec, max_chars: int = 200) -> str:
    """One short log line for a task, however many or long its stages."""
    stages = " | ".join(escape_controls(s.instruction) for s in task.stages)
    text = f"{task.stage_count} stage(s): {stages}"
    marker = " ... (shortened)"
    return text if len(text) <= max_chars else text[:max_chars - len(marker)] + marker


def _check_instruction(owner: str, raw) -> str:
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidTaskError(f"{owner} instruction is not valid UTF-8: {exc}") from exc
    if not isinstance(raw, str):
        raise InvalidTaskError(f"{owner} instruction must be text, got {type(raw).__name__}")
    text = raw.strip()
    if not text:
        raise InvalidTaskError(f"{owner} has an empty instruction")
    if not has_visible_character(text):  # zero-width spaces, control characters only
        raise InvalidTaskError(f"{owner} instruction has no visible character "
                               f"({escape_controls(text[:40])})")
    if "\ufffd" in text:  # what a ROS string with non-UTF-8 bytes decodes to
        raise InvalidTaskError(f"{owner} instruction holds bytes that are not valid UTF-8")
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise InvalidTaskError(f"{owner} instruction has {len(text)} characters; at most "
                               f"{MAX_INSTRUCTION_CHARS} are accepted")
    return text


def _optional_positive(value: float, what: str) -> Optional[float]:
    value = float(value)
    if math.isnan(value) or value < 0.0 or math.isinf(value):
        raise InvalidTaskError(f"{what} must be a finite number >= 0 (0 = default), got {value}")
    return value if value > 0.0 else None
