# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The task monitor's rules: thresholds, windows, time limits, dense-reward shape and log.

Validated once, when built (from node parameters, a YAML file or code), so the state machine in
``task_monitor.py`` never meets an impossible combination. Defaults and the reasons for them are
in docs/task-monitor.md.
"""
from __future__ import annotations

import dataclasses
from typing import Any, FrozenSet, Optional, Tuple

from robo_reward_ros.core.events import DenseRewardMode, FailureKind
from robo_reward_ros.core.success_detector import CameraRule


def _positive(name: str, value: Optional[float], allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if value is None or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")


def _unit(name: str, value: float, low_open: bool = False) -> None:
    ok = (0.0 < value <= 1.0) if low_open else (0.0 <= value <= 1.0)
    if not ok:
        interval = "(0, 1]" if low_open else "[0, 1]"
        raise ValueError(f"{name} must be in {interval}, got {value!r}")


@dataclasses.dataclass(frozen=True)
class MonitorConfig:
    """Monitor parameters. Defaults and the reasons for them are in docs/task-monitor.md."""

    # Success: k of the last n estimates at or over the threshold, per camera.
    success_threshold: float = 0.65  # on the success probability (upstream LIBERO online RL)
    progress_success_threshold: float = 0.9  # on progress, for backends without a success head
    success_k: int = 2
    success_n: int = 3
    camera_rule: CameraRule = CameraRule.MAJORITY
    cameras: Tuple[str, ...] = ()  # empty: combine over the cameras seen in the stage
    # Failures (task): progress units in [0, 1], times in seconds of frame stamps.
    regression_margin: float = 0.25
    regression_hold_s: float = 1.0
    stall_min_delta: float = 0.05
    stall_window_s: float = 15.0
    low_progress_floor: float = 0.15
    low_progress_grace_s: float = 10.0
    sustain_estimates: int = 2  # consecutive estimates a level must hold to count as reached
    stage_timeout_s: Optional[float] = None  # default per-stage limit; a stage may override
    episode_timeout_s: Optional[float] = 120.0  # default per-episode limit; a task may override
    terminal_failures: FrozenSet[FailureKind] = frozenset()
    # Camera / model health (never a task failure).
    camera_stale_after_s: float = 2.0
    # A gap longer than camera_stale_after_s between a camera's scored frames counts as a
    # camera outage (event, failure clocks restart). Right for estimates fed to the monitor
    # directly; the node and the replay turn it off: their frame intake detects outages by its
    # clock, and a slow model's gaps are no outage (with it on, a model slower than
    # camera_stale_after_s per step would never see a stall).
    gaps_are_outages: bool = True
    # Dense reward.
    reward_mode: DenseRewardMode = DenseRewardMode.DELTA  # a return independent of the step rate
    gamma: float = 0.99
    success_bonus: float = 1.0
    failure_bonus: float = -1.0
    timeout_bonus: float = 0.0
    zero_terminal_potential: bool = True
    # The operator in the loop (docs/operator-loop.md).
    confirm_decisions: bool = False  # a model success / terminal failure waits for an operator
    confirm_timeout_s: float = 30.0  # frame time a pending decision waits
    confirm_timeout_action: str = "apply"  # after the wait: apply the model's decision, or drop it
    verdict_conflict_s: float = 1.0  # an opposite verdict from another source this soon is refused
    start_after_reset_done: bool = False  # reset-done starts the next episode of the same task
    # A second opinion (docs/reward-engine.md): with a verifier model, a success whose deciding
    # value (success probability, else progress) lies in the band, or a terminal failure whose
    # stage progress does (verify_failures), waits for the verifier's reading of the same windows:
    # a success is confirmed at or over verifier_threshold, a failure under it; else vetoed.
    verify_successes: bool = False
    verify_failures: bool = False
    verifier_band: Tuple[float, float] = (0.5, 0.8)
    verifier_threshold: float = 0.5
    # Episode log.
    log_directory: Optional[str] = None  # None: no log
    fsync_estimates: bool = False

    def __post_init__(self) -> None:
        # Accept the plain strings / ints a ROS parameter or a YAML file carries.
        object.__setattr__(self, "camera_rule", _member("camera_rule", CameraRule, self.camera_rule))
        object.__setattr__(self, "reward_mode",
                           _member("reward_mode", DenseRewardMode, self.reward_mode))
        object.__setattr__(self, "cameras", tuple(self.cameras))
        object.__setattr__(
            self, "terminal_failures", frozenset(_failure_kind(k) for k in self.terminal_failures)
        )
        _unit("success_threshold", self.success_threshold, low_open=True)
        _unit("progress_success_threshold", self.progress_success_threshold, low_open=True)
        if not (isinstance(self.success_n, int) and isinstance(self.success_k, int)):
            raise ValueError("success_k and success_n must be integers")
        if not 1 <= self.success_k <= self.success_n:
            raise ValueError(
                f"success_k must be in [1, success_n]; got success_k={self.success_k}, "
                f"success_n={self.success_n}"
            )
        _unit("regression_margin", self.regression_margin, low_open=True)
        _unit("stall_min_delta", self.stall_min_delta)
        _unit("low_progress_floor", self.low_progress_floor)
        if self.regression_hold_s < 0:
            raise ValueError(f"regression_hold_s must be >= 0, got {self.regression_hold_s!r}")
        _positive("stall_window_s", self.stall_window_s)
        if self.low_progress_grace_s < 0:
            raise ValueError(
                f"low_progress_grace_s must be >= 0, got {self.low_progress_grace_s!r}"
            )
        if not (isinstance(self.sustain_estimates, int) and self.sustain_estimates >= 1):
            raise ValueError(
                f"sustain_estimates must be an integer >= 1, got {self.sustain_estimates!r}"
            )
        _positive("stage_timeout_s", self.stage_timeout_s, allow_none=True)
        _positive("episode_timeout_s", self.episode_timeout_s, allow_none=True)
        _positive("camera_stale_after_s", self.camera_stale_after_s)
        _positive("confirm_timeout_s", self.confirm_timeout_s)
        if self.confirm_timeout_action not in ("apply", "drop"):
            raise ValueError(f"confirm_timeout_action must be apply or drop, got {self.confirm_timeout_action!r}")
        band = tuple(float(v) for v in self.verifier_band)
        if len(band) != 2 or not 0.0 <= band[0] <= band[1] <= 1.0:
            raise ValueError(f"verifier_band must be [low, high] with 0 <= low <= high <= 1, got "
                             f"{list(self.verifier_band)!r}")
        object.__setattr__(self, "verifier_band", band)
        _unit("verifier_threshold", self.verifier_threshold)
        if not self.verdict_conflict_s >= 0.0:
            raise ValueError(f"verdict_conflict_s must be >= 0, got {self.verdict_conflict_s!r}")
        health = {k for k in self.terminal_failures if not k.is_task_failure}
        if health:
            raise ValueError(
                "camera stale and model error are not task failures and cannot be terminal: "
                f"remove {sorted(k.name for k in health)} from terminal_failures"
            )
        if FailureKind.TIMEOUT in self.terminal_failures:
            # A timeout always ends the episode; listing it is harmless but drop it for clarity.
            object.__setattr__(
                self, "terminal_failures", self.terminal_failures - {FailureKind.TIMEOUT}
            )
        if not 0.0 < self.gamma <= 1.0:
            raise ValueError(f"gamma must be in (0, 1], got {self.gamma!r}")


def _member(name: str, kind: Any, value: Any) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{name} must be one of {[m.value for m in kind]}, got {value!r}") from None


def _failure_kind(value: Any) -> FailureKind:
    if isinstance(value, str):
        try:
            return FailureKind[value.strip().upper()]
        except KeyError:
            pass
    try:
        return FailureKind(value)
    except ValueError:
        raise ValueError(
            f"unknown failure kind {value!r}; use one of {[k.name.lower() for k in FailureKind]}"
        ) from None
