# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Reward steps: what the controller gets for each decision, assembled apart from the decisions.

The monitor decides; this turns a decision into the dense reward it earned (``dense_reward.py``)
and the ``RewardStep`` carrying it, with the running return and Gymnasium's terminated/truncated.
"""
from __future__ import annotations

import dataclasses
from typing import Optional, Tuple

from robo_reward_ros.core.dense_reward import DenseReward, Outcome
from robo_reward_ros.core.events import DecidedBy, RewardStep, TaskStatus
from robo_reward_ros.core.monitor_config import MonitorConfig

_ENDED_BY_OUTCOME = (TaskStatus.SUCCEEDED, TaskStatus.FAILED)
_ENDED_WITHOUT_OUTCOME = (TaskStatus.TIMED_OUT, TaskStatus.IDLE)


@dataclasses.dataclass(frozen=True)
class ScoredStage:
    """The stage a step scores, taken before the decision may advance it."""

    index: int
    instruction: str
    progress: float


class EpisodeRewardSteps:
    """The reward steps of one episode; ``reset`` at every episode start."""

    def __init__(self, config: MonitorConfig) -> None:
        self._reward = DenseReward(config.reward_mode, config.gamma, config.success_bonus,
                                   config.failure_bonus, config.timeout_bonus,
                                   config.zero_terminal_potential)
        self.count = 0  # steps so far: the step_index of the next one
        self.task_progress = 0.0  # phi of the last step that had one

    def reset(self) -> None:
        self._reward.reset()
        self.count = 0
        self.task_progress = 0.0

    @property
    def episode_return(self) -> float:
        return self._reward.episode_return

    def earn(self, phi: Optional[float], outcome: Optional[Outcome]) -> float:
        """Return the dense reward for reaching task progress ``phi`` (None: no estimate, a timer's step)."""
        reward = self._reward.step(phi, outcome)
        if phi is not None:
            self.task_progress = phi
        return reward

    def step(self, reward: float, stamp: float, episode_id: str, num_stages: int,
             scored: ScoredStage, status: TaskStatus, reason: str, cameras: Tuple[str, ...],
             stage_succeeded: bool, success_prob: Optional[float], intervened: bool = False,
             decided_by: DecidedBy = DecidedBy.NONE, decider: str = "") -> RewardStep:
        """Return the next step; ``reason`` (why the episode ended) is kept only on an episode's last step."""
        ended = status in _ENDED_BY_OUTCOME or status in _ENDED_WITHOUT_OUTCOME
        step = RewardStep(
            stamp=stamp, episode_id=episode_id, step_index=self.count, stage_index=scored.index,
            num_stages=num_stages, instruction=scored.instruction, progress=scored.progress,
            task_progress=self.task_progress, reward=reward, episode_return=self.episode_return,
            success_prob=success_prob, stage_succeeded=stage_succeeded,
            terminated=status in _ENDED_BY_OUTCOME, truncated=status in _ENDED_WITHOUT_OUTCOME,
            status=status, cameras=cameras, reason=reason if ended else "", intervened=intervened,
            decided_by=decided_by, decider=decider)
        self.count += 1
        return step
