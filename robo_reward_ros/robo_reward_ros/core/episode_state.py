# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What one episode and its current stage hold, so that a new episode or stage starts from nothing.

The monitor (``task_monitor.py``) makes the transitions; these hold what the transitions read and
change: the episode's clock, status and counts, the stage's window, detectors and fused progress.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from robo_reward_ros.core.events import DecidedBy, FailureDetected, RewardEstimate, TaskStatus
from robo_reward_ros.core.failure_detectors import LowProgressDetector, RegressionDetector, StallDetector
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.monitor_update import MonitorState
from robo_reward_ros.core.operator_labels import PendingDecision
from robo_reward_ros.core.reward_steps import ScoredStage
from robo_reward_ros.core.success_detector import SuccessDetector
from robo_reward_ros.core.task_spec import TaskSpec


class EpisodeState:
    """Everything that belongs to one episode, so a new episode cannot inherit any of it."""

    def __init__(self, episode_id: str, task: TaskSpec, stamp: float, config: MonitorConfig):
        self.id = episode_id
        self.task = task
        self.start = stamp
        self.clock = stamp
        self.status = TaskStatus.RUNNING
        self.stage_index = 0
        self.reason = "episode started"
        self.accepted = 0
        self.rejected = 0
        self.stage = StageState(0, stamp, True, config, task.stages[0].success_threshold)
        # Who decided the last stage or episode end, and what waits for an operator.
        self.decided_by = DecidedBy.NONE
        self.decider = ""
        self.pending: Optional[PendingDecision] = None
        self.last_success_prob: Optional[float] = None
        # Takeovers: the running one's start (frame stamp), how many, their total length.
        self.intervention_since: Optional[float] = None
        self.interventions = 0
        self.intervention_s = 0.0
        self.ended_in_intervention = False  # the terminal step is still a demonstration's
        self.alerts: List[FailureDetected] = []  # non-terminal task-failure warnings, for dismissal
        self.dismissed: set = set()  # indices into alerts
        self.reset_reported = False

    def decide(self, decided_by: DecidedBy, decider: str = "") -> None:
        self.decided_by, self.decider = decided_by, decider

    def end_intervention(self, stamp: float) -> None:
        if self.intervention_since is not None:
            self.intervention_s += max(0.0, stamp - self.intervention_since)
            self.intervention_since = None

    def model_decision(self) -> str:
        """Return the model's own decision now, in words ("" when it has none)."""
        return self.pending.describe() if self.pending is not None else ""

    def scored_stage(self) -> ScoredStage:
        """Return the stage a step scores, before the step may advance it."""
        stage = self.stage
        return ScoredStage(stage.index, self.task.stages[stage.index].instruction, stage.progress)

    def known_progress(self) -> Optional[float]:
        """Return the stage's progress, None before its first estimate."""
        return self.stage.progress if self.stage.accepted else None

    def snapshot(self, task_progress: float, episode_return: float) -> MonitorState:
        stage = self.stage
        stages = self.task.stages
        best = stage.regression.best
        return MonitorState(
            status=self.status,
            episode_id=self.id,
            stage_index=self.stage_index,
            num_stages=len(stages),
            instruction=stages[min(self.stage_index, len(stages) - 1)].instruction,
            stage_progress=stage.progress,
            best_progress=best if best is not None else 0.0,
            task_progress=task_progress,
            success_score=stage.success_score,
            window_start_stamp=stage.start,
            episode_start_stamp=self.start,
            stage_start_stamp=stage.start,
            stamp=self.clock,
            estimates_accepted=self.accepted,
            estimates_rejected=self.rejected,
            episode_return=episode_return,
            reason=self.reason,
            decided_by=self.decided_by,
            decider=self.decider,
            intervention_active=self.intervention_since is not None,
            pending_success=self.pending is not None and self.pending.success,
            interventions=self.interventions,
            intervention_s=self.intervention_s + (
                max(0.0, self.clock - self.intervention_since)
                if self.intervention_since is not None else 0.0),
        )


class StageState:
    """Everything that belongs to one stage: a new stage starts from nothing."""

    def __init__(self, index: int, start: float, inclusive: bool, config: MonitorConfig,
                 threshold: Optional[float]):
        self.index = index
        self.start = start
        # Stage 0 takes frames stamped at the episode start; later stages exclude the frame on
        # which the previous stage succeeded.
        self.inclusive = inclusive
        # A stage's own threshold replaces both defaults: it applies to whichever score the
        # backend provides (TaskSpec.msg, StageSpec.success_threshold).
        self.success_threshold = threshold or config.success_threshold
        self.progress_threshold = threshold or config.progress_success_threshold
        self.success = SuccessDetector(config.success_k, config.success_n, self.success_threshold,
                                       self.progress_threshold, config.camera_rule, config.cameras)
        self.used_success_head = False
        self.accepted = 0
        sustain = config.sustain_estimates
        self.regression = RegressionDetector(config.regression_margin, config.regression_hold_s, sustain)
        self.stall = StallDetector(config.stall_min_delta, config.stall_window_s, sustain)
        self.low = LowProgressDetector(config.low_progress_floor, config.low_progress_grace_s, sustain,
                                       start)
        self.latest_progress: Dict[str, float] = {}
        self.last_camera_stamp: Dict[str, float] = {}
        self.stale_cameras: set = set()  # reported stale, waiting for their next estimate
        self.model_error_pending = False
        self.progress = 0.0
        self.success_score = 0.0
        self.history: List[Tuple[float, float]] = []  # (stamp, fused progress) per step

    def accepts(self, estimate: RewardEstimate) -> bool:
        first = estimate.frame_stamps[0]
        return first >= self.start if self.inclusive else first > self.start

    def restart_clocks(self, stamp: float) -> None:
        self.regression.restart_clock(stamp)
        self.stall.restart_clock(stamp)
        self.low.restart_clock(stamp)

    def fused_progress(self) -> float:
        live = [p for c, p in self.latest_progress.items() if c not in self.stale_cameras]
        values = live or list(self.latest_progress.values())
        return sum(values) / len(values) if values else 0.0

    def success_reason(self, config: MonitorConfig) -> str:
        """Say which rule the stage's success met, and on which cameras."""
        if self.used_success_head:
            rule = f"success probability >= {self.success_threshold:g}"
        else:
            rule = f"progress >= {self.progress_threshold:g} (no success head)"
        return (f"stage {self.index + 1} succeeded: {rule} in {config.success_k} of the last "
                f"{config.success_n} estimates ({config.camera_rule.value} of cameras: "
                f"{', '.join(self.success.succeeded_cameras)})")

    def trend(self) -> Tuple[float, bool]:
        """Return (least-squares slope of the fused progress per second, stalled); NaN below two distinct stamps."""
        stamps = [t for t, _ in self.history]
        if len(set(stamps)) < 2:
            return float("nan"), self.stall.stalled
        slope = np.polyfit(np.asarray(stamps), np.asarray([p for _, p in self.history]), 1)[0]
        return float(slope), self.stall.stalled
