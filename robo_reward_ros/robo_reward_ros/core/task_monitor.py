"""The task monitor: one episode's state machine over reward estimates.

It turns estimates into typed events (stage success and advance, failures, episode end), a dense
reward and a state snapshot, and logs all of it. The ROS node only translates: it calls
``start_episode``, ``update`` for every estimate, ``tick`` on a timer with the newest frame stamp
(so time limits fire even when the model is silent), ``report_camera_stale`` and
``report_model_error``, and publishes what comes back.

All time is frame-stamp time in seconds. See docs/task-monitor.md for the design and defaults.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from robo_reward_ros.core.dense_reward import DenseReward, Outcome, task_potential
from robo_reward_ros.core.best_effort_log import BestEffortEpisodeLog, LogHealth
from robo_reward_ros.core.episode_ids import new_episode_id
from robo_reward_ros.core.events import (
    EpisodeEnded,
    EpisodeStarted,
    FailureDetected,
    FailureKind,
    MonitorEvent,
    RewardEstimate,
    RewardStep,
    Severity,
    StageAdvanced,
    StageSucceeded,
    TaskStatus,
)
from robo_reward_ros.core.failure_detectors import (Finding, LowProgressDetector, RegressionDetector,
                                                    StallDetector)
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.monitor_update import MonitorState, MonitorUpdate
from robo_reward_ros.core.success_detector import SuccessDetector
from robo_reward_ros.core.task_spec import TaskSpec


class _Episode:
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
        self.failure_counts: Dict[str, int] = {}
        self.last_phi = 0.0
        self.steps = 0  # reward steps so far (RewardStep.step_index of the next one)
        self.stage = _Stage(0, stamp, True, config, task.stages[0].success_threshold)


class _Stage:
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
        self.success = SuccessDetector(
            config.success_k,
            config.success_n,
            self.success_threshold,
            self.progress_threshold,
            config.camera_rule,
            config.cameras,
        )
        self.used_success_head = False
        self.accepted = 0
        sustain = config.sustain_estimates
        self.regression = RegressionDetector(
            config.regression_margin, config.regression_hold_s, sustain
        )
        self.stall = StallDetector(config.stall_min_delta, config.stall_window_s, sustain)
        self.low = LowProgressDetector(
            config.low_progress_floor, config.low_progress_grace_s, sustain, start
        )
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


class TaskMonitor:
    """Success, failure, stage and episode decisions for a stream of reward estimates.

    Not thread-safe: call it from one thread (the node's executor or a single worker).
    """

    def __init__(self, config: Optional[MonitorConfig] = None) -> None:
        self.config = config or MonitorConfig()
        self._episode: Optional[_Episode] = None
        # Best effort: a log that cannot be written never stops scoring, decisions or resets.
        self._log: Optional[BestEffortEpisodeLog] = None
        if self.config.log_directory is not None:
            self._log = BestEffortEpisodeLog(self.config.log_directory, self.config.fsync_estimates)
        self._log_path: Optional[str] = None
        self._log_error_reported = False
        self._reward = DenseReward(
            self.config.reward_mode,
            self.config.gamma,
            self.config.success_bonus,
            self.config.failure_bonus,
            self.config.timeout_bonus,
            self.config.zero_terminal_potential,
        )

    # ---- episode lifecycle -------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._episode is not None and self._episode.status in (
            TaskStatus.RUNNING,
            TaskStatus.STAGE_SUCCEEDED,
        )

    @property
    def log_path(self) -> Optional[str]:
        """The log file of the current or last episode (None when logging is off)."""
        return self._log_path

    @property
    def log_health(self) -> Optional[LogHealth]:
        """Whether the episode logs are being written (None when logging is off)."""
        return None if self._log is None else self._log.health

    def take_log(self, previous: "TaskMonitor") -> None:
        """Continue ``previous``'s episode logs (new rules at an episode start): waiting records stay."""
        if previous._log is not None:
            self._log, previous._log = previous._log, None
            self._log_path = previous._log_path

    def start_episode(
        self,
        task: TaskSpec,
        stamp: float,
        episode_id: Optional[str] = None,
    ) -> MonitorUpdate:
        """Start a fresh episode at frame stamp ``stamp``.

        A running episode is aborted first (its end event comes first in the returned events).
        Frames stamped before ``stamp`` belong to no episode and are rejected.
        """
        events: List[MonitorEvent] = []
        if self.running:
            events.extend(self.abort_episode(stamp, "a new episode was started").events)
        self._close_log()
        if episode_id is None:
            episode_id = new_episode_id()
        self._episode = _Episode(episode_id, task, float(stamp), self.config)
        self._reward.reset()
        if self._log is not None:
            self._log_path = self._log.open(episode_id)
            self._log.write_event(self._header_record())
        events.append(
            self._emit(
                EpisodeStarted(
                    stamp=float(stamp),
                    episode_id=episode_id,
                    stage_index=0,
                    instruction=task.stages[0].instruction,
                    num_stages=len(task.stages),
                )
            )
        )
        return MonitorUpdate(tuple(events), None, self.state, accepted=False)

    def abort_episode(self, stamp: float, reason: str) -> MonitorUpdate:
        """End the running episode without a task outcome (operator stop, shutdown).

        The status returns to IDLE, no reward or bonus is given, and no reset is requested.
        """
        if not self.running:
            return MonitorUpdate((), None, self.state)
        episode = self._episode
        assert episode is not None
        episode.clock = max(episode.clock, float(stamp))
        scored = self._scored_stage()
        event = self._finish(episode.clock, TaskStatus.IDLE, f"aborted: {reason}", reset=False)
        # The controller still gets the episode's one terminal step: truncated, nothing earned.
        step = self._step(0.0, episode.clock, (), scored, False, None)
        state = self.state
        self._write_summary(None)
        return MonitorUpdate((event,), None, state, step=step)

    # ---- inputs ------------------------------------------------------------------------

    def update(self, estimate: RewardEstimate) -> MonitorUpdate:
        """Feed one estimate: a step of one camera (see update_step)."""
        return self.update_step([estimate])

    def update_step(self, estimates: Sequence[RewardEstimate]) -> MonitorUpdate:
        """Feed one inference step: the estimates of the cameras scored in it.

        One decision and one reward step for all of them, so neither depends on the number of
        cameras. Estimates outside a running episode, or with a frame from before the current
        stage's window, are rejected (logged, no events, no reward).
        """
        episode = self._episode
        if not self.running or episode is None:
            return MonitorUpdate((), None, self.state)
        stage = episode.stage
        taken = []
        for estimate in estimates:
            accepted = stage.accepts(estimate) and estimate.stamp >= episode.start
            self._log_estimate(estimate, accepted=accepted)
            if accepted:
                episode.accepted += 1
                taken.append(estimate)
            else:
                episode.rejected += 1
        if not taken:
            return MonitorUpdate((), None, self.state)
        if episode.status is TaskStatus.STAGE_SUCCEEDED:
            episode.status = TaskStatus.RUNNING
        episode.clock = max([episode.clock] + [e.stamp for e in taken])
        now = episode.clock
        cameras = tuple(e.camera for e in taken)
        newest = max(e.stamp for e in taken)  # what the step covers (the clock may be ahead)
        scored = self._scored_stage()

        events: List[MonitorEvent] = []
        timeout = self._check_timeouts(now)
        if timeout:
            return self._step_update(timeout, None, Outcome.TIMEOUT, cameras, scored, False, None,
                                     newest)

        probabilities = []
        for estimate in taken:
            events.extend(self._resume_after_gap(stage, estimate, now))
            stage.latest_progress[estimate.camera] = estimate.last_progress
            stage.last_camera_stamp[estimate.camera] = estimate.stamp
            stage.success_score = stage.success.vote(
                estimate.camera, estimate.last_success_prob, estimate.last_progress
            )
            stage.used_success_head = estimate.success_prob is not None
            if estimate.last_success_prob is not None:
                probabilities.append(estimate.last_success_prob)
            stage.accepted += 1
        stage.progress = stage.fused_progress()
        stage.history.append((now, stage.progress))
        scored = self._scored_stage()
        success_prob = sum(probabilities) / len(probabilities) if probabilities else None

        if stage.success.succeeded():
            events.extend(self._stage_succeeded(stage, now))
            last = episode.status is TaskStatus.SUCCEEDED
            phi = task_potential(stage.index + 1, 0.0, len(episode.task.stages))
            return self._step_update(events, phi, Outcome.SUCCESS if last else None, cameras,
                                     scored, True, success_prob, newest)

        outcome: Optional[Outcome] = None
        for detector in (stage.regression, stage.stall, stage.low):
            finding = detector.update(now, stage.progress)
            if finding is None:
                continue
            terminal = finding.kind in self.config.terminal_failures
            events.append(self._failure(finding, now, terminal))
            if terminal:
                events.append(
                    self._finish(now, TaskStatus.FAILED, finding.description, reset=True,
                                 failure_kind=finding.kind)
                )
                outcome = Outcome.FAILURE
                break
        phi = task_potential(stage.index, stage.progress, len(episode.task.stages))
        return self._step_update(events, phi, outcome, cameras, scored, False, success_prob,
                                 newest)

    def tick(self, stamp: float) -> MonitorUpdate:
        """Advance time to frame stamp ``stamp`` without an estimate.

        This way time limits fire while the model is slow or silent. Call it on a timer with the
        newest frame stamp.
        """
        episode = self._episode
        log_events = self._check_log(stamp)
        if not self.running or episode is None:
            return MonitorUpdate(tuple(log_events), None, self.state)
        episode.clock = max(episode.clock, float(stamp))
        scored = self._scored_stage()
        events = self._check_timeouts(episode.clock)
        if not events:
            return MonitorUpdate(tuple(log_events), None, self.state)
        update = self._step_update(log_events + events, None, Outcome.TIMEOUT, (), scored, False,
                                   None)
        return dataclasses.replace(update, accepted=False)

    def _check_log(self, stamp: float) -> List[MonitorEvent]:
        """Retry what waits for the disk; one event per period in which the log cannot be written."""
        if self._log is None:
            return []
        self._log.retry()
        error = self._log.health.error
        if not error:
            self._log_error_reported = False
            return []
        if self._log_error_reported or not self.running:
            return []
        self._log_error_reported = True
        text = (f"episode log cannot be written: {error}; scoring, decisions and resets go on, "
                f"records wait in memory and are retried (not a task failure)")
        return [self._health_event(FailureKind.EPISODE_LOG_ERROR, Severity.ERROR, stamp, text,
                                   None, "")]

    def report_camera_stale(self, camera: str, stamp: float, age_s: float,
                            refused: str = "") -> MonitorUpdate:
        """Report that the node had no usable frame from ``camera`` for ``age_s`` seconds (its own clock).

        ``refused``: why, when frames came and were all refused (empty: none came).

        Reported once per stale period; never a task failure, never ends the episode. The camera's
        progress and votes are set aside until it delivers again.
        """
        episode = self._episode
        if not self.running or episode is None:
            return MonitorUpdate((), None, self.state)
        stage = episode.stage
        if camera in stage.stale_cameras:
            return MonitorUpdate((), None, self.state)
        stage.stale_cameras.add(camera)
        stage.success.forget_camera(camera)
        what = (f"delivered no usable frame for {age_s:.1f} s ({refused})" if refused
                else f"delivered no frame for {age_s:.1f} s")
        description = (
            f"camera '{camera}' {what}; progress and success votes from it are paused until it "
            f"delivers again (not a task failure)"
        )
        event = self._health_event(FailureKind.CAMERA_STALE, Severity.WARNING, stamp,
                                   description, age_s, camera)
        return MonitorUpdate((event,), None, self.state)

    def report_model_error(self, stamp: float, description: str,
                           camera: str = "") -> MonitorUpdate:
        """Report that the reward model failed (exception, non-finite output, out of memory).

        Reported once until the next accepted estimate; never a task failure, never ends the episode.
        """
        episode = self._episode
        if not self.running or episode is None:
            return MonitorUpdate((), None, self.state)
        stage = episode.stage
        if stage.model_error_pending:
            return MonitorUpdate((), None, self.state)
        stage.model_error_pending = True
        text = f"reward model error: {description} (not a task failure)"
        event = self._health_event(FailureKind.MODEL_ERROR, Severity.ERROR, stamp, text,
                                   None, camera)
        return MonitorUpdate((event,), None, self.state)

    def stage_trend(self) -> Tuple[float, bool]:
        """(least-squares slope of the stage's fused progress per second, stalled) of the running stage.

        The slope is NaN with fewer than two steps at distinct stamps.
        """
        episode = self._episode
        if episode is None:
            return float("nan"), False
        stage = episode.stage
        stamps = [t for t, _ in stage.history]
        if len(set(stamps)) < 2:
            return float("nan"), stage.stall.stalled
        import numpy as np
        slope = np.polyfit(np.asarray(stamps), np.asarray([p for _, p in stage.history]), 1)[0]
        return float(slope), stage.stall.stalled

    # ---- state -------------------------------------------------------------------------

    @property
    def state(self) -> MonitorState:
        episode = self._episode
        if episode is None:
            return MonitorState(status=TaskStatus.IDLE)
        stage = episode.stage
        stages = episode.task.stages
        index = min(episode.stage_index, len(stages) - 1)
        best = stage.regression.best
        return MonitorState(
            status=episode.status,
            episode_id=episode.id,
            stage_index=episode.stage_index,
            num_stages=len(stages),
            instruction=stages[index].instruction,
            stage_progress=stage.progress,
            best_progress=best if best is not None else 0.0,
            task_progress=episode.last_phi,
            success_score=stage.success_score,
            window_start_stamp=stage.start,
            episode_start_stamp=episode.start,
            stage_start_stamp=stage.start,
            stamp=episode.clock,
            estimates_accepted=episode.accepted,
            estimates_rejected=episode.rejected,
            episode_return=self._reward.episode_return,
            reason=episode.reason,
        )

    # ---- internals ---------------------------------------------------------------------

    def _check_timeouts(self, now: float) -> List[MonitorEvent]:
        episode = self._episode
        assert episode is not None
        stage_spec = episode.task.stages[episode.stage_index]
        limits = (
            ("episode", episode.start,
             episode.task.episode_timeout_sec or self.config.episode_timeout_s),
            (f"stage {episode.stage_index + 1} ('{stage_spec.instruction}')", episode.stage.start,
             stage_spec.timeout_sec or self.config.stage_timeout_s),
        )
        for what, start, limit in limits:
            if limit is None or now - start < limit:
                continue
            finding = Finding(
                kind=FailureKind.TIMEOUT,
                value=now - start,
                threshold=limit,
                description=(
                    f"{what} ran {now - start:.1f} s, over its {limit:.1f} s limit; the "
                    f"episode ends and a reset is requested"
                ),
            )
            failure = self._failure(finding, now, terminal=True)
            end = self._finish(now, TaskStatus.TIMED_OUT, finding.description, reset=True,
                               failure_kind=FailureKind.TIMEOUT)
            return [failure, end]
        return []

    def _resume_after_gap(self, stage: _Stage, estimate: RewardEstimate,
                          now: float) -> List[MonitorEvent]:
        """Restart the failure clocks when a camera or the model comes back: time without frames is not robot time.

        A camera comes back from a gap or a reported stale period, the model from an error.
        """
        events: List[MonitorEvent] = []
        camera = estimate.camera
        previous = stage.last_camera_stamp.get(camera)
        gap = estimate.stamp - previous if previous is not None else 0.0
        resumed = camera in stage.stale_cameras or stage.model_error_pending
        outage = self.config.gaps_are_outages and gap > self.config.camera_stale_after_s
        if outage and camera not in stage.stale_cameras:
            events.append(self._health_event(
                FailureKind.CAMERA_STALE, Severity.WARNING, now,
                f"camera '{camera}' delivered no scored frame for {gap:.1f} s "
                f"(from {previous:.2f} s to {estimate.stamp:.2f} s); failure timers restarted "
                f"(not a task failure)",
                gap, camera,
            ))
        if outage or resumed:
            stage.success.forget_camera(camera)
            stage.restart_clocks(now)
        stage.stale_cameras.discard(camera)
        stage.model_error_pending = False
        return events

    def _stage_succeeded(self, stage: _Stage, now: float) -> List[MonitorEvent]:
        episode = self._episode
        assert episode is not None
        stages = episode.task.stages
        config = self.config
        if stage.used_success_head:
            rule = f"success probability >= {stage.success_threshold:g}"
        else:
            rule = f"progress >= {stage.progress_threshold:g} (no success head)"
        cameras = stage.success.succeeded_cameras
        reason = (f"stage {stage.index + 1} succeeded: {rule} in {config.success_k} of the last "
                  f"{config.success_n} estimates ({config.camera_rule.value} of cameras: "
                  f"{', '.join(cameras)})")
        episode.reason = reason
        events: List[MonitorEvent] = [self._emit(StageSucceeded(
            stamp=now, episode_id=episode.id, stage_index=stage.index,
            instruction=stages[stage.index].instruction, score=stage.success_score,
            cameras=cameras, reason=reason,
        ))]
        if stage.index + 1 >= len(stages):
            events.append(self._finish(now, TaskStatus.SUCCEEDED,
                                       f"all {len(stages)} stage(s) succeeded", reset=True))
            return events
        episode.stage_index = stage.index + 1
        episode.stage = _Stage(stage.index + 1, now, False, self.config,
                               stages[stage.index + 1].success_threshold)
        episode.status = TaskStatus.STAGE_SUCCEEDED
        events.append(self._emit(StageAdvanced(
            stamp=now, episode_id=episode.id, stage_index=episode.stage_index,
            instruction=stages[episode.stage_index].instruction, window_start_stamp=now,
        )))
        return events

    def _failure(self, finding: Finding, now: float, terminal: bool) -> FailureDetected:
        episode = self._episode
        assert episode is not None
        name = finding.kind.name.lower()
        episode.failure_counts[name] = episode.failure_counts.get(name, 0) + 1
        return self._emit(FailureDetected(
            stamp=now, episode_id=episode.id, stage_index=episode.stage_index,
            kind=finding.kind, severity=Severity.ERROR if terminal else Severity.WARNING,
            terminal=terminal, description=finding.description, value=finding.value,
            threshold=finding.threshold, progress=self._known_progress(),
        ))

    def _known_progress(self) -> Optional[float]:
        episode = self._episode
        assert episode is not None
        return episode.stage.progress if episode.stage.accepted else None

    def _health_event(self, kind: FailureKind, severity: Severity, stamp: float,
                      description: str, value: Optional[float], camera: str) -> FailureDetected:
        episode = self._episode
        assert episode is not None
        name = kind.name.lower()
        episode.failure_counts[name] = episode.failure_counts.get(name, 0) + 1
        return self._emit(FailureDetected(
            stamp=max(float(stamp), episode.start), episode_id=episode.id,
            stage_index=episode.stage_index, kind=kind, severity=severity, terminal=False,
            description=description, value=value, camera=camera,
            progress=self._known_progress(),
        ))

    def _finish(self, now: float, status: TaskStatus, reason: str, reset: bool,
                failure_kind: int = 0) -> EpisodeEnded:
        episode = self._episode
        assert episode is not None
        episode.status = status
        episode.reason = reason
        completed = episode.stage_index + (1 if status is TaskStatus.SUCCEEDED else 0)
        event = self._emit(EpisodeEnded(
            stamp=now, episode_id=episode.id, stage_index=episode.stage_index, status=status,
            reason=reason, reset_requested=reset, failure_kind=int(failure_kind),
            stages_completed=completed,
        ))
        return event

    def _scored_stage(self) -> Tuple[int, str, float]:
        """(index, instruction, fused progress) of the stage a step scores, before it may advance."""
        episode = self._episode
        assert episode is not None
        stage = episode.stage
        return stage.index, episode.task.stages[stage.index].instruction, stage.progress

    def _step_update(self, events, phi: Optional[float], outcome: Optional[Outcome],
                     cameras: Tuple[str, ...], scored: Tuple[int, str, float],
                     stage_succeeded: bool, success_prob: Optional[float],
                     stamp: Optional[float] = None) -> MonitorUpdate:
        """Take the reward step of a decision; return the update that carries it.

        ``stamp``: the newest frame stamp the step covers (None: a timer's step, at the clock).
        """
        episode = self._episode
        assert episode is not None
        reward = self._reward_step(phi, outcome)
        step = self._step(reward, episode.clock if stamp is None else stamp, cameras, scored,
                          stage_succeeded, success_prob)
        return MonitorUpdate(tuple(events), reward, self.state, accepted=True, step=step,
                             accepted_cameras=cameras)

    def _step(self, reward: float, stamp: float, cameras: Tuple[str, ...],
              scored: Tuple[int, str, float], stage_succeeded: bool,
              success_prob: Optional[float]) -> RewardStep:
        episode = self._episode
        assert episode is not None
        index, instruction, progress = scored
        status = episode.status
        step = RewardStep(
            stamp=stamp, episode_id=episode.id, step_index=episode.steps, stage_index=index,
            num_stages=len(episode.task.stages), instruction=instruction, progress=progress,
            task_progress=episode.last_phi, reward=reward,
            episode_return=self._reward.episode_return, success_prob=success_prob,
            stage_succeeded=stage_succeeded,
            terminated=status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED),
            truncated=status in (TaskStatus.TIMED_OUT, TaskStatus.IDLE), status=status,
            cameras=cameras, reason=episode.reason if not self.running else "")
        episode.steps += 1
        return step

    def _reward_step(self, phi: Optional[float], outcome: Optional[Outcome]) -> float:
        episode = self._episode
        assert episode is not None
        reward = self._reward.step(phi, outcome)
        if phi is not None:
            episode.last_phi = phi
        if not self.running:
            # The reward step that ends an episode carries its bonus, so the summary follows it.
            self._write_summary(reward)
        return reward

    def _emit(self, event: MonitorEvent) -> Any:
        if self._log is not None:
            self._log.write_event(event.to_record())
        return event

    def _log_estimate(self, estimate: RewardEstimate, accepted: bool) -> None:
        if self._log is not None:
            record = estimate.to_record()
            record["accepted"] = accepted
            assert self._episode is not None
            record["stage_index"] = self._episode.stage_index
            self._log.write_estimate(record)

    def _header_record(self) -> Dict[str, Any]:
        episode = self._episode
        assert episode is not None
        config = dataclasses.asdict(self.config)
        config["camera_rule"] = self.config.camera_rule.value
        config["reward_mode"] = self.config.reward_mode.value
        config["terminal_failures"] = sorted(k.name.lower() for k in
                                             self.config.terminal_failures)
        return {
            "type": "header",
            "episode_id": episode.id,
            "start_stamp": episode.start,
            "stages": [dataclasses.asdict(s) for s in episode.task.stages],
            "episode_timeout_sec": episode.task.episode_timeout_sec,
            "config": config,
            "pid": os.getpid(),
        }

    def _write_summary(self, final_reward: Optional[float]) -> None:
        episode = self._episode
        if self._log is None or episode is None:
            return
        self._log.write_event({
            "type": "summary",
            "episode_id": episode.id,
            "status": int(episode.status),
            "status_name": episode.status.name,
            "reason": episode.reason,
            "start_stamp": episode.start,
            "end_stamp": episode.clock,
            "duration_s": episode.clock - episode.start,
            "stages_completed": episode.stage_index
            + (1 if episode.status is TaskStatus.SUCCEEDED else 0),
            "num_stages": len(episode.task.stages),
            "estimates_accepted": episode.accepted,
            "estimates_rejected": episode.rejected,
            "failures_by_kind": dict(episode.failure_counts),
            "final_reward": final_reward,
            "episode_return": self._reward.episode_return,
        })
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.finish()

    def close(self) -> None:
        """Close the episode log (the node calls this on shutdown, after abort_episode)."""
        if self._log is not None:
            self._log.close()
