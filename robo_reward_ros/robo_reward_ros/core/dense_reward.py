# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Dense reward for an RL controller, from the monitor's task progress.

The potential is task progress over all stages,

    phi_t = (k + p_t) / K,

with ``k`` the index of the current stage, ``p_t`` the fused progress of the stage in [0, 1] and
``K`` the number of stages. At a stage's success ``phi`` is (k + 1) / K, so it is continuous across
an advance even though the model's per-stage progress restarts near 0.

Modes (``t`` counts accepted estimates; the first estimate of an episode only sets phi_0 and
gets no shaping, r_0 = 0 for ``delta`` and ``potential``):

- ``progress``:  r_t = phi_t                         (upstream Robometer online-RL reward)
- ``delta``:     r_t = phi_t - phi_{t-1}             (sums to phi_T - phi_0)
- ``potential``: r_t = gamma * phi_t - phi_{t-1}     (Ng, Harada & Russell 1999 shaping, which
  leaves the optimal policy unchanged). On the terminal step phi of the absorbing state is taken
  as 0 (``zero_terminal_potential``), which episodic tasks need for that guarantee to hold.

On the terminal step the bonus is added: ``success_bonus`` when the last stage succeeded,
``failure_bonus`` when a failure configured as terminal ended the episode, ``timeout_bonus`` when
a time limit did. A timeout is a truncation rather than a task outcome, so its bonus defaults to 0.
"""
from __future__ import annotations

import enum
from typing import Optional

from robo_reward_ros.core.events import DenseRewardMode


class Outcome(enum.Enum):
    SUCCESS = "success"
    FAILURE = "failure"
    TIMEOUT = "timeout"


def task_potential(stage_index: int, stage_progress: float, num_stages: int) -> float:
    """Return phi = (k + p) / K, clipped to [0, 1]."""
    p = min(1.0, max(0.0, stage_progress))
    return min(1.0, (stage_index + p) / num_stages)


class DenseReward:
    """Reward of one episode; ``reset`` at every episode start."""

    def __init__(
        self,
        mode: DenseRewardMode,
        gamma: float,
        success_bonus: float,
        failure_bonus: float,
        timeout_bonus: float,
        zero_terminal_potential: bool = True,
    ) -> None:
        self.mode = DenseRewardMode(mode)
        self.gamma = gamma
        self._bonus = {
            Outcome.SUCCESS: success_bonus,
            Outcome.FAILURE: failure_bonus,
            Outcome.TIMEOUT: timeout_bonus,
        }
        self._zero_terminal_potential = zero_terminal_potential
        self._previous: Optional[float] = None
        self.episode_return = 0.0

    def reset(self) -> None:
        self._previous = None
        self.episode_return = 0.0

    def step(self, phi: Optional[float], outcome: Optional[Outcome] = None) -> float:
        """Reward for reaching potential ``phi`` (None: no new estimate, e.g. a timeout tick).

        ``outcome`` is set on the terminal step only.
        """
        previous = self._previous
        if phi is None:
            phi = previous if previous is not None else 0.0
        if self.mode is DenseRewardMode.PROGRESS:
            reward = phi
        elif previous is None:
            reward = 0.0
        elif self.mode is DenseRewardMode.DELTA:
            reward = phi - previous
        else:
            terminal = outcome is not None and self._zero_terminal_potential
            reward = self.gamma * (0.0 if terminal else phi) - previous
        if outcome is not None:
            reward += self._bonus[outcome]
        self._previous = phi
        self.episode_return += reward
        return reward
