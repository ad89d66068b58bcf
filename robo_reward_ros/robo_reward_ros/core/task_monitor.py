# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The task monitor: one episode's state machine over reward estimates.

It turns estimates into typed events (stage success and advance, failures, episode end) and reward
steps. The node calls ``start_episode``, ``update`` for every estimate, ``tick`` on a timer with the
newest frame stamp (so time limits fire while the model is silent), ``report_camera_stale`` and
``report_model_error``, and publishes what comes back. All time is frame-stamp time in seconds;
docs/task-monitor.md has the design and the defaults.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import List, Optional, Sequence, Tuple

from robo_reward_ros.core.best_effort_log import LogHealth
from robo_reward_ros.core.dense_reward import Outcome, task_potential
from robo_reward_ros.core.episode_ids import new_episode_id
from robo_reward_ros.core.episode_recorder import EpisodeRecorder
from robo_reward_ros.core.events import (DecidedBy, DecisionPending, EpisodeEnded, EpisodeStarted,
                                         FailureDetected, FailureKind, MonitorEvent, RewardEstimate,
                                         RewardStep, Severity, StageAdvanced, StageSucceeded,
                                         TaskStatus)
from robo_reward_ros.core.episode_state import EpisodeState, StageState
from robo_reward_ros.core.failure_detectors import Finding
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.monitor_update import MonitorState, MonitorUpdate
from robo_reward_ros.core.operator_inputs import OperatorInputs
from robo_reward_ros.core.operator_labels import PendingDecision
from robo_reward_ros.core.reward_steps import EpisodeRewardSteps, ScoredStage
from robo_reward_ros.core.task_spec import TaskSpec
from robo_reward_ros.core.time_limits import time_limit_exceeded
from robo_reward_ros.core.verifier_inputs import VerifierInputs


# Ended episodes an operator's late label may still name (ids, oldest dropped first).
KEPT_ENDED_EPISODES = 1000


class TaskMonitor(OperatorInputs, VerifierInputs):
    """Success, failure, stage and episode decisions for a stream of reward estimates.

    The operator's inputs (verdicts, vetoes, takeovers, resets, dismissals) are in
    ``operator_inputs.py``. Not thread-safe: call it from one thread (the node's executor or a
    single worker).
    """

    def __init__(self, config: Optional[MonitorConfig] = None) -> None:
        self.config = config or MonitorConfig()
        self._episode: Optional[EpisodeState] = None
        self._recorder = EpisodeRecorder(self.config.log_directory, self.config.fsync_estimates)
        self._log_error_reported = False
        self._steps = EpisodeRewardSteps(self.config)
        self._ended: "collections.OrderedDict[str, EpisodeState]" = collections.OrderedDict()
        self._last_verdict = None  # (episode id, Verdict, source, wall time): conflicts

    # ---- episode lifecycle -------------------------------------------------------------

    @property
    def running(self) -> bool:
        episode = self._episode
        return episode is not None and episode.status in (TaskStatus.RUNNING, TaskStatus.STAGE_SUCCEEDED,
                                                          TaskStatus.PENDING)

    @property
    def log_path(self) -> Optional[str]:
        """The log file of the current or last episode (None when logging is off)."""
        return self._recorder.path

    @property
    def log_health(self) -> Optional[LogHealth]:
        """Whether the episode logs are being written (None when logging is off)."""
        return self._recorder.health

    def take_log(self, previous: TaskMonitor) -> None:
        """Continue ``previous``'s episode logs (new rules at an episode start): waiting records stay.

        The episodes it ran stay known, for operators' late labels.
        """
        self._recorder.take_over(previous._recorder)
        self._ended = previous._ended
        if previous._episode is not None and not previous.running:
            self._remember(previous._episode)

    def start_episode(self, task: TaskSpec, stamp: float, episode_id: Optional[str] = None) -> MonitorUpdate:
        """Start a fresh episode at frame stamp ``stamp``.

        A running episode is aborted first (its end event comes first in the returned events).
        Frames stamped before ``stamp`` belong to no episode and are rejected.
        """
        events: List[MonitorEvent] = []
        if self.running:
            events.extend(self.abort_episode(stamp, "a new episode was started").events)
        self._recorder.finish()
        if self._episode is not None:
            self._remember(self._episode)
        if episode_id is None:
            episode_id = new_episode_id()
        self._episode = EpisodeState(episode_id, task, float(stamp), self.config)
        self._steps.reset()
        self._recorder.open(episode_id, float(stamp), task, self.config)
        events.append(self._recorder.event(EpisodeStarted(
            stamp=float(stamp), episode_id=episode_id, stage_index=0,
            instruction=task.stages[0].instruction, num_stages=len(task.stages),
        )))
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
        scored = episode.scored_stage()
        event = self._finish(episode.clock, TaskStatus.IDLE, f"aborted: {reason}", reset=False,
                             decided_by=DecidedBy.ABORT)
        # The controller still gets the episode's one terminal step: truncated, nothing earned.
        step = self._step(0.0, episode.clock, (), scored, False, None)
        state = self.state
        self._recorder.summary(state, None)
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
            self._recorder.estimate(estimate, accepted, episode.stage_index)
            if accepted:
                episode.accepted += 1
                taken.append(estimate)
            else:
                episode.rejected += 1
        if not taken:
            return MonitorUpdate((), None, self.state)
        if episode.status is TaskStatus.STAGE_SUCCEEDED:
            episode.status = TaskStatus.RUNNING
            episode.decide(DecidedBy.NONE)
        episode.clock = max([episode.clock] + [e.stamp for e in taken])
        now = episode.clock
        cameras = tuple(e.camera for e in taken)
        newest = max(e.stamp for e in taken)  # what the step covers (the clock may be ahead)
        scored = episode.scored_stage()

        events: List[MonitorEvent] = []
        timeout = self._check_timeouts(now)
        if timeout:
            return self._step_update(timeout, None, Outcome.TIMEOUT, cameras, scored, False, None, newest)

        probabilities = []
        for estimate in taken:
            events.extend(self._resume_after_gap(stage, estimate, now))
            stage.latest_progress[estimate.camera] = estimate.last_progress
            stage.last_camera_stamp[estimate.camera] = estimate.stamp
            stage.success_score = stage.success.vote(estimate.camera, estimate.last_success_prob,
                                                     estimate.last_progress)
            stage.used_success_head = estimate.success_prob is not None
            if estimate.last_success_prob is not None:
                probabilities.append(estimate.last_success_prob)
            stage.accepted += 1
        stage.progress = stage.fused_progress()
        stage.history.append((now, stage.progress))
        scored = episode.scored_stage()
        success_prob = sum(probabilities) / len(probabilities) if probabilities else None
        episode.last_success_prob = success_prob
        step = (cameras, scored, success_prob, newest)

        if episode.pending is not None:
            # The decision is frozen until an operator answers or the wait ends: no new one.
            resolved = self._pending_timed_out(now, step)
            if resolved is not None:
                return resolved
        elif stage.success.succeeded():
            decided = PendingDecision(True, now, stage.success_reason(self.config), step=step)
            value = success_prob if success_prob is not None else stage.progress
            if self._second_opinion_wanted(True, value):
                self._await_verifier(decided, value)
            elif self.config.confirm_decisions:
                events.append(self._hold(decided, now))
            else:
                return self._succeed(events, now, DecidedBy.MODEL, "", "", step)
        elif episode.intervention_since is None:  # a stall during a takeover is no robot failure
            for detector in (stage.regression, stage.stall, stage.low):
                finding = detector.update(now, stage.progress)
                if finding is None:
                    continue
                terminal = finding.kind in self.config.terminal_failures
                if terminal and self._second_opinion_wanted(False, stage.progress):
                    self._await_verifier(PendingDecision(False, now, finding.description, int(finding.kind),
                                                         step=step), stage.progress)
                    break
                if terminal and self.config.confirm_decisions:
                    events.append(self._hold(PendingDecision(
                        False, now, finding.description, int(finding.kind)), now))
                    break
                failure = self._failure(finding, now, terminal)
                events.append(failure)
                if terminal:
                    return self._fail(events, now, finding.description, finding.kind,
                                      DecidedBy.MODEL, "", step)
                episode.alerts.append(failure)
        phi = task_potential(stage.index, stage.progress, len(episode.task.stages))
        return self._step_update(events, phi, None, cameras, scored, False, success_prob, newest)

    # ---- decisions (the model's, an operator's, a pending one's) ---------------------------

    def _succeed(self, events: List[MonitorEvent], now: float, decided_by: DecidedBy, decider: str,
                 reason: str, step) -> MonitorUpdate:
        """End the running stage with success (the last stage: the episode), as ``decided_by`` decided."""
        episode = self._episode
        assert episode is not None
        stage = episode.stage
        cameras, scored, success_prob, newest = step
        episode.pending = None
        events.extend(self._stage_succeeded(stage, now, decided_by, decider, reason))
        last = episode.status is TaskStatus.SUCCEEDED
        phi = task_potential(stage.index + 1, 0.0, len(episode.task.stages))
        return self._step_update(events, phi, Outcome.SUCCESS if last else None, cameras,
                                 scored, True, success_prob, newest)

    def _fail(self, events: List[MonitorEvent], now: float, description: str, kind: int,
              decided_by: DecidedBy, decider: str, step) -> MonitorUpdate:
        """End the episode with a task failure (the failure event is already in ``events``)."""
        episode = self._episode
        assert episode is not None
        cameras, scored, success_prob, newest = step
        episode.pending = None
        events.append(self._finish(now, TaskStatus.FAILED, description, reset=True,
                                   failure_kind=kind, decided_by=decided_by, decider=decider))
        phi = task_potential(episode.stage.index, episode.stage.progress, len(episode.task.stages))
        return self._step_update(events, phi, Outcome.FAILURE, cameras, scored, False,
                                 success_prob, newest)

    def _hold(self, pending: PendingDecision, now: float) -> DecisionPending:
        """Make the model's decision wait for an operator (confirmation mode); nothing ends yet."""
        episode = self._episode
        assert episode is not None
        episode.pending = pending
        episode.status = TaskStatus.PENDING
        episode.decide(DecidedBy.MODEL)
        timeout = self.config.confirm_timeout_s
        after = "applied" if self.config.confirm_timeout_action == "apply" else "dropped"
        episode.reason = (f"{pending.describe()}; waiting for an operator to confirm or veto, "
                          f"{after} after {timeout:g} s")
        return self._recorder.event(DecisionPending(
            stamp=now, episode_id=episode.id, stage_index=episode.stage_index,
            success=pending.success, reason=pending.reason, timeout_s=timeout))

    def _pending_timed_out(self, now: float, step) -> Optional[MonitorUpdate]:
        """Apply or drop a pending decision that waited ``confirm_timeout_s``; None while it may still wait."""
        episode = self._episode
        assert episode is not None
        pending = episode.pending
        if pending is None or now - pending.stamp < self.config.confirm_timeout_s:
            return None
        waited = f"no operator answered within {self.config.confirm_timeout_s:g} s"
        if self.config.confirm_timeout_action == "apply":
            return self._apply_pending(now, DecidedBy.MODEL, "", f"{waited}: applied", step)
        self._drop_pending(now, f"{pending.describe()}: {waited}: dropped")
        return self._step_going_on(step)

    def _step_going_on(self, step) -> MonitorUpdate:
        """Return the reward step of a step whose held decision was dropped: the stage goes on."""
        episode = self._episode
        phi = task_potential(episode.stage.index, episode.stage.progress, len(episode.task.stages))
        return self._step_update([], phi, None, step[0], step[1], False, step[2], step[3])

    def _apply_pending(self, now: float, decided_by: DecidedBy, decider: str, why: str, step) -> MonitorUpdate:
        episode = self._episode
        assert episode is not None
        pending = episode.pending
        assert pending is not None
        reason = f"{pending.reason}; {why}"
        if pending.success:
            return self._succeed([], now, decided_by, decider, reason, step)
        finding = Finding(FailureKind(pending.failure_kind), None, None, reason)
        failure = self._failure(finding, now, True, decided_by, decider)
        return self._fail([failure], now, reason, pending.failure_kind, decided_by, decider, step)

    def _drop_pending(self, now: float, reason: str) -> None:
        """Forget a pending decision: the stage runs on, its success votes and failure clocks start over."""
        episode = self._episode
        assert episode is not None
        episode.pending = None
        episode.status = TaskStatus.RUNNING
        episode.decide(DecidedBy.NONE)
        episode.reason = reason
        episode.stage.success.reset()
        episode.stage.restart_clocks(now)

    def _remember(self, episode: EpisodeState) -> None:
        self._ended[episode.id] = episode
        self._ended.move_to_end(episode.id)
        while len(self._ended) > KEPT_ENDED_EPISODES:
            self._ended.popitem(last=False)

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
        scored = episode.scored_stage()
        events = self._check_timeouts(episode.clock)
        if not events:
            resolved = self._pending_timed_out(episode.clock, ((), scored, None, None))
            if resolved is not None:
                return dataclasses.replace(resolved, events=tuple(log_events) + resolved.events,
                                           accepted=False)
            return MonitorUpdate(tuple(log_events), None, self.state)
        update = self._step_update(log_events + events, None, Outcome.TIMEOUT, (), scored, False, None)
        return dataclasses.replace(update, accepted=False)

    def _check_log(self, stamp: float) -> List[MonitorEvent]:
        """Retry what waits for the disk; one event per period in which the log cannot be written."""
        error = self._recorder.retry()
        if not error:
            self._log_error_reported = False
            return []
        if self._log_error_reported or not self.running:
            return []
        self._log_error_reported = True
        text = (f"episode log cannot be written: {error}; scoring, decisions and resets go on, "
                f"records wait in memory and are retried (not a task failure)")
        return [self._health_event(FailureKind.EPISODE_LOG_ERROR, Severity.ERROR, stamp, text, None, "")]

    def report_camera_stale(self, camera: str, stamp: float, age_s: float, refused: str = "") -> MonitorUpdate:
        """Report that the node had no usable frame from ``camera`` for ``age_s`` seconds (its own clock).

        ``refused``: why, when frames came and were all refused (empty: none came).

        Reported once per stale period; never a task failure, never ends the episode. The camera's
        progress and votes are set aside until it delivers again.
        """
        episode = self._episode
        if not self.running or episode is None or camera in episode.stage.stale_cameras:
            return MonitorUpdate((), None, self.state)
        stage = episode.stage
        stage.stale_cameras.add(camera)
        stage.success.forget_camera(camera)
        what = (f"delivered no usable frame for {age_s:.1f} s ({refused})" if refused
                else f"delivered no frame for {age_s:.1f} s")
        description = (
            f"camera '{camera}' {what}; progress and success votes from it are paused until it "
            f"delivers again (not a task failure)"
        )
        event = self._health_event(FailureKind.CAMERA_STALE, Severity.WARNING, stamp, description, age_s, camera)
        return MonitorUpdate((event,), None, self.state)

    def report_model_error(self, stamp: float, description: str, camera: str = "") -> MonitorUpdate:
        """Report that the reward model failed (exception, non-finite output, out of memory).

        Reported once until the next accepted estimate; never a task failure, never ends the episode.
        """
        episode = self._episode
        if not self.running or episode is None or episode.stage.model_error_pending:
            return MonitorUpdate((), None, self.state)
        episode.stage.model_error_pending = True
        text = f"reward model error: {description} (not a task failure)"
        event = self._health_event(FailureKind.MODEL_ERROR, Severity.ERROR, stamp, text, None, camera)
        return MonitorUpdate((event,), None, self.state)

    def stage_trend(self) -> Tuple[float, bool]:
        """(least-squares slope of the stage's fused progress per second, stalled) of the running stage.

        The slope is NaN with fewer than two steps at distinct stamps.
        """
        return (float("nan"), False) if self._episode is None else self._episode.stage.trend()

    # ---- state -------------------------------------------------------------------------

    @property
    def state(self) -> MonitorState:
        if self._episode is None:
            return MonitorState(status=TaskStatus.IDLE)
        return self._episode.snapshot(self._steps.task_progress, self._steps.episode_return)

    # ---- internals ---------------------------------------------------------------------

    def _check_timeouts(self, now: float) -> List[MonitorEvent]:
        episode = self._episode
        assert episode is not None
        finding = time_limit_exceeded(episode.task, episode.stage_index, episode.start,
                                      episode.stage.start, now, self.config)
        if finding is None:
            return []
        failure = self._failure(finding, now, True, DecidedBy.TIME_LIMIT)
        end = self._finish(now, TaskStatus.TIMED_OUT, finding.description, reset=True,
                           failure_kind=FailureKind.TIMEOUT, decided_by=DecidedBy.TIME_LIMIT)
        return [failure, end]

    def _resume_after_gap(self, stage: StageState, estimate: RewardEstimate, now: float) -> List[MonitorEvent]:
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

    def _stage_succeeded(self, stage: StageState, now: float, decided_by: DecidedBy, decider: str,
                         reason: str = "") -> List[MonitorEvent]:
        episode = self._episode
        assert episode is not None
        stages = episode.task.stages
        episode.decide(decided_by, decider)
        given = reason  # an operator's or a pending decision's words, kept on the episode's end
        episode.reason = reason = reason or stage.success_reason(self.config)
        events: List[MonitorEvent] = [self._recorder.event(StageSucceeded(
            stamp=now, episode_id=episode.id, stage_index=stage.index,
            instruction=stages[stage.index].instruction, score=stage.success_score,
            cameras=stage.success.succeeded_cameras, reason=reason, decided_by=decided_by,
            decider=decider,
        ))]
        if stage.index + 1 >= len(stages):
            events.append(self._finish(now, TaskStatus.SUCCEEDED,
                                       f"all {len(stages)} stage(s) succeeded"
                                       + (f" ({given})" if given else ""), reset=True,
                                       decided_by=decided_by, decider=decider))
            return events
        episode.stage_index = stage.index + 1
        episode.stage = StageState(stage.index + 1, now, False, self.config, stages[stage.index + 1].success_threshold)
        episode.status = TaskStatus.STAGE_SUCCEEDED
        events.append(self._recorder.event(StageAdvanced(
            stamp=now, episode_id=episode.id, stage_index=episode.stage_index,
            instruction=stages[episode.stage_index].instruction, window_start_stamp=now,
        )))
        return events

    def _failure(self, finding: Finding, now: float, terminal: bool,
                 decided_by: DecidedBy = DecidedBy.MODEL, decider: str = "") -> FailureDetected:
        episode = self._episode
        assert episode is not None
        return self._recorder.event(FailureDetected(
            stamp=now, episode_id=episode.id, stage_index=episode.stage_index,
            kind=finding.kind, severity=Severity.ERROR if terminal else Severity.WARNING,
            terminal=terminal, description=finding.description, value=finding.value,
            threshold=finding.threshold, progress=episode.known_progress(),
            decided_by=decided_by if terminal else DecidedBy.NONE, decider=decider,
        ))

    def _health_event(self, kind: FailureKind, severity: Severity, stamp: float,
                      description: str, value: Optional[float], camera: str) -> FailureDetected:
        episode = self._episode
        assert episode is not None
        return self._recorder.event(FailureDetected(
            stamp=max(float(stamp), episode.start), episode_id=episode.id,
            stage_index=episode.stage_index, kind=kind, severity=severity, terminal=False,
            description=description, value=value, camera=camera,
            progress=episode.known_progress(),
        ))

    def _finish(self, now: float, status: TaskStatus, reason: str, reset: bool,
                failure_kind: int = 0, decided_by: DecidedBy = DecidedBy.MODEL,
                decider: str = "") -> EpisodeEnded:
        episode = self._episode
        assert episode is not None
        episode.status = status
        episode.reason = reason
        episode.pending = None
        episode.decide(decided_by, decider)
        episode.ended_in_intervention = episode.intervention_since is not None
        episode.end_intervention(now)
        return self._recorder.event(EpisodeEnded(
            stamp=now, episode_id=episode.id, stage_index=episode.stage_index, status=status,
            reason=reason, reset_requested=reset, failure_kind=int(failure_kind),
            stages_completed=episode.stage_index + (1 if status is TaskStatus.SUCCEEDED else 0),
            decided_by=decided_by, decider=decider,
        ))

    def _step_update(self, events, phi: Optional[float], outcome: Optional[Outcome],
                     cameras: Tuple[str, ...], scored: ScoredStage, stage_succeeded: bool,
                     success_prob: Optional[float], stamp: Optional[float] = None) -> MonitorUpdate:
        """Take the reward step of a decision; return the update that carries it.

        ``stamp``: the newest frame stamp the step covers (None: a timer's step, at the clock).
        """
        episode = self._episode
        assert episode is not None
        reward = self._steps.earn(phi, outcome)
        if not self.running:
            # The reward step that ends an episode carries its bonus, so the summary follows it.
            self._recorder.summary(self.state, reward)
        step = self._step(reward, episode.clock if stamp is None else stamp, cameras, scored,
                          stage_succeeded, success_prob)
        return MonitorUpdate(tuple(events), reward, self.state, accepted=True, step=step,
                             accepted_cameras=cameras)

    def _step(self, reward: float, stamp: float, cameras: Tuple[str, ...], scored: ScoredStage,
              stage_succeeded: bool, success_prob: Optional[float]) -> RewardStep:
        episode = self._episode
        assert episode is not None
        decided = stage_succeeded or not self.running
        return self._steps.step(reward, stamp, episode.id, len(episode.task.stages), scored,
                                episode.status, episode.reason, cameras, stage_succeeded,
                                success_prob, intervened=episode.intervention_since is not None or (
                                    not self.running and episode.ended_in_intervention),
                                decided_by=episode.decided_by if decided else DecidedBy.NONE,
                                decider=episode.decider if decided else "")

    def close(self) -> None:
        """Close the episode log (the node calls this on shutdown, after abort_episode)."""
        self._recorder.close()
