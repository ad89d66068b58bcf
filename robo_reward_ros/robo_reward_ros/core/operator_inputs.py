# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The operator's side of the task monitor: verdicts, vetoes, takeovers, reset-done and dismissals.

Mixed into ``TaskMonitor``, whose decisions it uses (``_succeed``, ``_fail``, ``_drop_pending``), so
an operator's decision ends a stage or an episode exactly as the model's would: one terminal step
with the bonus, the events, the reset request. What it adds is the checks (who, which episode,
which stage, a conflict) and the label each input leaves in the episode log, applied or not, with
the model's view at that moment. docs/operator-loop.md has the rules.
"""
from __future__ import annotations

import time
from typing import Optional, Tuple

from robo_reward_ros.core.events import DecidedBy, FailureKind, TaskStatus
from robo_reward_ros.core.failure_detectors import Finding
from robo_reward_ros.core.monitor_update import MonitorUpdate
from robo_reward_ros.core.operator_labels import (LabelKind, OperatorAnswer, OperatorLabel, Verdict,
                                                  parse_verdict)


class OperatorInputs:
    """Operator inputs of one monitor; every method answers (never raises) and records a label."""

    # ---- verdicts ----------------------------------------------------------------------------

    def operator_verdict(self, stamp: float, verdict, source: str, reason: str = "",
                         episode_id: str = "", stage_number: int = 0,
                         wall: Optional[float] = None) -> OperatorAnswer:
        """Judge the running stage (``stage_number`` counts from 1; 0: the running one) or a past episode.

        ``wall``: the operator's clock (monotonic seconds) for the conflict rule; now by default.
        """
        wall = time.monotonic() if wall is None else wall
        label = _Label(self, LabelKind.VERDICT, stamp, source, reason)
        try:
            verdict = parse_verdict(verdict)
        except ValueError as exc:
            return label.refuse(str(exc))
        label.verdict = int(verdict)
        if not source.strip():
            return label.refuse("a verdict must name its source (an operator or a program)")
        episode, late = self._labelled_episode(episode_id)
        if episode is None:
            return label.refuse(self._unknown_episode(episode_id))
        label.about(episode)
        conflict = self._verdict_conflict(episode.id, verdict, source, wall)
        if conflict:
            return label.refuse(conflict)
        if not 0 <= stage_number <= len(episode.task.stages):
            return label.refuse(f"stage {stage_number} does not exist: the task has "
                                f"{len(episode.task.stages)} stage(s)")
        if late:
            self._last_verdict = (episode.id, verdict, source, wall)
            return label.late(f"episode {episode.id} had already ended ({episode.status.name.lower()}, "
                              f"decided by {_who(episode.decided_by, episode.decider)}): recorded as "
                              f"a late {verdict.name.lower()} label of it; nothing changed now")
        if stage_number and stage_number != episode.stage_index + 1:
            return label.refuse(f"stage {stage_number} is not running (stage {episode.stage_index + 1} is)")
        if verdict is Verdict.NOT_YET:
            answer = self._veto(label, episode)
        else:
            answer = self._apply_verdict(label, episode, verdict, source, reason)
        if answer.accepted:
            self._last_verdict = (episode.id, verdict, source, wall)
        return answer

    def _apply_verdict(self, label, episode, verdict: Verdict, source: str, reason: str) -> OperatorAnswer:
        now = episode.clock
        step = ((), episode.scored_stage(), episode.last_success_prob, None)
        because = f"operator {source}: {verdict.name.lower()}" + (f" ({reason})" if reason else "")
        pending = episode.pending
        if pending is not None and pending.success == (verdict is Verdict.SUCCESS):
            update = self._apply_pending(now, DecidedBy.OPERATOR, source, f"confirmed by {because}", step)
            return label.apply(f"confirmed the model's pending {'success' if pending.success else 'failure'}",
                               update)
        if verdict is Verdict.SUCCESS:
            stage = episode.stage_index + 1
            update = self._succeed([], now, DecidedBy.OPERATOR, source, because, step)
            return label.apply(f"stage {stage} succeeded, decided by {source}", update)
        failure = self._failure(Finding(FailureKind.OPERATOR, None, None, because), now, True,
                                DecidedBy.OPERATOR, source)
        update = self._fail([failure], now, because, FailureKind.OPERATOR, DecidedBy.OPERATOR, source, step)
        return label.apply(f"episode {episode.id} failed, decided by {source}", update)

    def _veto(self, label, episode) -> OperatorAnswer:
        """Not yet: drop a pending decision, or take back the success votes the stage holds."""
        pending = episode.pending
        who = f"{label.source}" + (f" ({label.reason})" if label.reason else "")
        if pending is not None:
            self._drop_pending(episode.clock, f"{pending.describe()}: vetoed by {who}")
            return label.apply(f"vetoed the model's pending {'success' if pending.success else 'failure'}; "
                               f"stage {episode.stage_index + 1} goes on", self._state_update())
        votes = episode.stage.success.positive_votes
        if votes:
            episode.stage.success.reset()
            episode.reason = f"{votes} success vote(s) of stage {episode.stage_index + 1} vetoed by {who}"
            return label.apply(f"took back {votes} success vote(s); stage {episode.stage_index + 1} "
                               f"goes on", self._state_update())
        return label.refuse(f"nothing to veto: stage {episode.stage_index + 1} has no pending decision "
                            "and no success vote")

    def _verdict_conflict(self, episode_id: str, verdict: Verdict, source: str, wall: float) -> str:
        last = self._last_verdict
        if last is None or last[0] != episode_id or last[2] == source or last[1] == verdict:
            return ""
        age = wall - last[3]
        if age >= self.config.verdict_conflict_s:
            return ""
        return (f"conflicts with {last[2]}'s {last[1].name.lower()} verdict on episode {episode_id} "
                f"{age:.2f} s earlier: the first verdict wins")

    # ---- takeovers ---------------------------------------------------------------------------

    def set_intervention(self, stamp: float, active: bool, source: str, reason: str = "") -> OperatorAnswer:
        """Take over (``active``) or hand back for a person; steps between are flagged, failure detectors pause."""
        kind = LabelKind.INTERVENTION_START if active else LabelKind.INTERVENTION_END
        label = _Label(self, kind, stamp, source, reason)
        episode = self._episode
        if not source.strip():
            return label.refuse("a takeover must name its source (an operator or a program)")
        if episode is None or not self.running:
            return label.refuse("no episode is running")
        label.about(episode)
        now = episode.clock
        if active:
            if episode.intervention_since is not None:
                return label.refuse(f"a takeover is already active since {episode.intervention_since:.2f} s")
            episode.intervention_since = now
            episode.interventions += 1
            return label.apply(f"takeover {episode.interventions} started: steps are flagged "
                               "intervened, failure detectors pause", self._state_update())
        if episode.intervention_since is None:
            return label.refuse("no takeover is active: an end needs a start")
        length = now - episode.intervention_since
        episode.end_intervention(now)
        episode.stage.restart_clocks(now)  # time under a person's control is not the robot's
        return label.apply(f"takeover ended after {length:.1f} s; failure detectors resume",
                           self._state_update())

    # ---- after the episode -------------------------------------------------------------------

    def reset_done(self, stamp: float, source: str, reason: str = "") -> OperatorAnswer:
        """Record that the scene was reset after a reset request; the caller starts the next episode if configured."""
        label = _Label(self, LabelKind.RESET_DONE, stamp, source, reason)
        episode = self._episode
        if not source.strip():
            return label.refuse("a reset-done must name its source (an operator or a program)")
        if episode is None:
            return label.refuse("no episode has ended yet: nothing to reset after")
        if self.running:
            return label.refuse(f"episode {episode.id} is running: reset-done comes after a reset request")
        label.about(episode)
        if not episode.status.ended:
            return label.refuse(f"episode {episode.id} was aborted ({episode.reason}): no reset was requested")
        if episode.reset_reported:
            return label.refuse(f"the reset after episode {episode.id} was already reported")
        episode.reset_reported = True
        if self.config.start_after_reset_done:
            return label.apply("scene reset: the next episode of the same task starts", self._state_update())
        return label.apply("scene reset recorded (operator.start_after_reset_done is off: start the "
                           "next episode with start_episode)", self._state_update())

    def dismiss_alert(self, stamp: float, episode_id: str, kind: int, source: str,
                      reason: str = "") -> OperatorAnswer:
        """Mark a non-terminal failure event of the running or last episode a false alarm (``kind`` 0: the newest)."""
        label = _Label(self, LabelKind.DISMISS_ALERT, stamp, source, reason)
        episode = self._episode
        if not source.strip():
            return label.refuse("a dismissal must name its source (an operator or a program)")
        if episode is None or (episode_id and episode_id != episode.id):
            return label.refuse(self._unknown_episode(episode_id) if episode_id not in self._ended
                                else f"episode {episode_id} is not the running or last one: only their "
                                     "alerts can be dismissed")
        label.about(episode)
        found = [i for i, alert in enumerate(episode.alerts)
                 if (not kind or int(alert.kind) == kind) and i not in episode.dismissed]
        if not found:
            what = f"no {FailureKind(kind).name.lower()} alert" if kind in FailureKind._value2member_map_ else \
                "no alert" if not kind else f"no alert of kind {kind}"
            return label.refuse(f"{what} to dismiss in episode {episode.id}")
        index = found[-1]
        alert = episode.alerts[index]
        episode.dismissed.add(index)
        label.alert = alert
        return label.apply(f"{alert.kind.name.lower()} alert at {alert.stamp:.2f} s marked a false alarm",
                           MonitorUpdate((), None, self.state))

    # ---- helpers -----------------------------------------------------------------------------

    def _labelled_episode(self, episode_id: str) -> Tuple[Optional[object], bool]:
        """Return (the episode a label names, whether it has ended); (None, False) for an unknown one."""
        episode = self._episode
        if episode is not None and episode_id in ("", episode.id):
            return episode, not self.running
        ended = self._ended.get(episode_id)
        return (ended, True) if ended is not None else (None, False)

    def _unknown_episode(self, episode_id: str) -> str:
        if not episode_id:
            return "no episode has run yet"
        running = self._episode.id if self._episode is not None else "none"
        return (f"unknown episode '{episode_id}': this node has not run it since it started "
                f"(the current or last episode is {running})")

    def _state_update(self) -> MonitorUpdate:
        return MonitorUpdate((), None, self.state)


def _who(decided_by: DecidedBy, decider: str) -> str:
    return decider if decided_by is DecidedBy.OPERATOR and decider else decided_by.name.lower().replace("_", " ")


class _Label:
    """Builds one input's label, records it (durably) and wraps it in the answer.

    The model's view (progress, success probability, its own decision) is taken when the label
    learns which episode it is about, before the input changes anything.
    """

    def __init__(self, monitor, kind: LabelKind, stamp: float, source: str, reason: str) -> None:
        self.monitor = monitor
        self.kind = kind
        self.stamp = float(stamp)
        self.source = source.strip()
        self.reason = reason.strip()
        self.verdict = 0
        self.alert = None
        self.episode = None
        self.about(monitor._episode)

    def about(self, episode) -> None:
        self.episode = episode
        self._view = (episode.stage_index, episode.known_progress(), episode.last_success_prob,
                      _model_decision(episode)) if episode is not None else (0, None, None, "")
        if episode is not None and episode is self.monitor._episode:
            self.stamp = max(self.stamp, episode.clock)

    def apply(self, outcome: str, update: MonitorUpdate) -> OperatorAnswer:
        return self._answer(True, outcome, update, applied=True)

    def late(self, outcome: str) -> OperatorAnswer:
        return self._answer(True, outcome, MonitorUpdate((), None, self.monitor.state), late=True)

    def refuse(self, why: str) -> OperatorAnswer:
        return self._answer(False, f"refused: {why}", MonitorUpdate((), None, self.monitor.state))

    def _answer(self, accepted: bool, outcome: str, update: MonitorUpdate, applied: bool = False,
                late: bool = False) -> OperatorAnswer:
        stage_index, progress, success_prob, decision = self._view
        label = OperatorLabel(
            stamp=self.stamp, episode_id=self.episode.id if self.episode is not None else "",
            stage_index=stage_index, kind=self.kind, source=self.source, reason=self.reason,
            applied=applied, late=late, outcome=outcome, verdict=self.verdict,
            model_progress=progress, model_success_prob=success_prob, model_decision=decision,
            alert_kind=int(self.alert.kind) if self.alert is not None else 0,
            alert_stamp=self.alert.stamp if self.alert is not None else None,
        )
        # Recorded as an event: fsync-ed before the caller answers, so an acknowledged label
        # survives a kill.
        self.monitor._recorder.event(label)
        return OperatorAnswer(accepted, outcome, label, update)


def _model_decision(episode) -> str:
    """Return the model's own decision about the episode now, in words ("" when it has none)."""
    if episode.pending is not None:
        return episode.model_decision()
    if episode.status is not TaskStatus.RUNNING and episode.decided_by is DecidedBy.MODEL:
        return episode.reason
    return ""
