# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The operator's inputs to the task monitor: verdicts, vetoes, confirmation, takeovers, resets, dismissals.

Each decides exactly as the model's decision would (one terminal step with the bonus, the events,
the reset request), says who decided, and leaves a label in the episode log, applied or not.
"""
import pytest

from monitor_traces import estimate
from robo_reward_ros.core.episode_log import read_episode_log
from robo_reward_ros.core.events import DecidedBy, DecisionPending, EpisodeEnded, FailureKind, TaskStatus
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.operator_labels import LabelKind, Verdict
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task

TWO_STAGES = ["open the drawer", "close the drawer"]


def _monitor(tmp_path=None, stages=TWO_STAGES, **overrides):
    config = MonitorConfig(success_k=2, success_n=3, log_directory=str(tmp_path) if tmp_path else None,
                           **overrides)
    monitor = TaskMonitor(config)
    monitor.start_episode(build_task(stages), 0.0, episode_id="ep1")
    return monitor


def _labels(monitor):
    return [r for r in read_episode_log(monitor.log_path) if r["type"] == "OperatorLabel"]


def test_a_success_verdict_ends_the_stage_and_the_last_one_the_episode_decided_by_the_operator(tmp_path):
    monitor = _monitor(tmp_path)
    monitor.update(estimate(1.0, 0.4, 0.2))
    answer = monitor.operator_verdict(1.2, Verdict.SUCCESS, "alice", "drawer is open")
    assert answer.accepted and answer.update.step.stage_succeeded and not answer.update.step.terminal
    assert answer.update.step.decided_by is DecidedBy.OPERATOR and answer.update.step.decider == "alice"
    assert monitor.state.stage_index == 1 and monitor.state.decided_by is DecidedBy.OPERATOR
    monitor.update(estimate(2.0, 0.3, 0.1, window_start=1.5))
    end = monitor.operator_verdict(2.1, "success", "alice").update
    # phi from (1 + 0.3) / 2 to 1, plus the success bonus: as the model's own success would pay.
    assert end.step.terminated and end.step.reward == pytest.approx(1.0 - 0.65 + 1.0)
    assert end.state.status is TaskStatus.SUCCEEDED and end.step.decided_by is DecidedBy.OPERATOR
    (ended,) = [e for e in end.events if isinstance(e, EpisodeEnded)]
    assert ended.reset_requested and ended.decided_by is DecidedBy.OPERATOR and ended.decider == "alice"
    labels = _labels(monitor)
    assert [(r["applied"], r["source"], r["stage_index"]) for r in labels] == [(True, "alice", 0), (True, "alice", 1)]
    assert labels[0]["model_progress"] == pytest.approx(0.4) and labels[0]["model_success_prob"] == pytest.approx(0.2)


def test_a_failure_verdict_ends_the_episode_with_the_failure_bonus_and_an_operator_failure_event():
    monitor = _monitor(failure_bonus=-1.0)
    monitor.update(estimate(1.0, 0.5, 0.2))
    update = monitor.operator_verdict(1.0, Verdict.FAILURE, "bob", "knocked the cup over").update
    assert update.step.terminated and update.state.status is TaskStatus.FAILED
    assert update.step.reward == pytest.approx(-1.0)  # phi unchanged, the failure bonus
    failure = [e for e in update.events if getattr(e, "kind", None) is FailureKind.OPERATOR]
    assert failure and failure[0].terminal and failure[0].decided_by is DecidedBy.OPERATOR
    assert failure[0].description == "operator bob: failure (knocked the cup over)"
    assert "knocked the cup over" in update.step.reason


def test_confirmation_mode_holds_the_models_success_pays_no_success_and_a_veto_keeps_the_stage_running(tmp_path):
    monitor = _monitor(tmp_path, confirm_decisions=True, confirm_timeout_s=5.0)
    updates = [monitor.update(estimate(t, 0.9, 0.9)) for t in (1.0, 1.5)]
    pending = [e for u in updates for e in u.events if isinstance(e, DecisionPending)]
    assert pending and pending[0].success
    assert monitor.state.status is TaskStatus.PENDING and monitor.state.stage_index == 0
    assert not any(u.step.stage_succeeded or u.step.terminal for u in updates)
    assert updates[-1].step.task_progress == pytest.approx(0.45)  # stage 0 at 0.9 of 2 stages, no advance
    assert "pending confirmation" in monitor.state.reason and "veto" in monitor.state.reason
    veto = monitor.operator_verdict(1.6, Verdict.NOT_YET, "alice", "handle still out")
    assert veto.accepted and monitor.state.status is TaskStatus.RUNNING and monitor.state.stage_index == 0
    # The veto took the votes back: one more success vote is not enough for k=2 again.
    assert not monitor.update(estimate(2.0, 0.9, 0.9)).step.stage_succeeded
    assert monitor.state.status is TaskStatus.RUNNING
    (label,) = _labels(monitor)
    assert label["verdict"] == Verdict.NOT_YET and label["applied"]
    assert label["model_decision"].startswith("success pending confirmation")


def test_a_confirmation_applies_the_pending_success_and_a_timeout_applies_or_drops_it():
    monitor = _monitor(confirm_decisions=True, confirm_timeout_s=5.0)
    for t in (1.0, 1.5):
        monitor.update(estimate(t, 0.9, 0.9))
    confirmed = monitor.operator_verdict(1.6, Verdict.SUCCESS, "alice")
    assert "confirmed" in confirmed.message and confirmed.update.step.stage_succeeded
    assert monitor.state.stage_index == 1 and "confirmed by operator alice" in monitor.state.reason
    # Nobody answers: applied after the wait, decided by the model (the tick finds it).
    monitor = _monitor(stages=["open the drawer"], confirm_decisions=True, confirm_timeout_s=5.0)
    for t in (1.0, 1.5):
        monitor.update(estimate(t, 0.9, 0.9))
    assert monitor.tick(4.0).step is None
    applied = monitor.tick(6.6)
    assert applied.step.terminated and applied.state.status is TaskStatus.SUCCEEDED
    assert applied.step.decided_by is DecidedBy.MODEL and "no operator answered" in applied.step.reason
    # ... or dropped: the stage goes on.
    monitor = _monitor(confirm_decisions=True, confirm_timeout_s=5.0, confirm_timeout_action="drop")
    for t in (1.0, 1.5):
        monitor.update(estimate(t, 0.9, 0.9))
    assert monitor.state.status is TaskStatus.PENDING
    monitor.update(estimate(7.0, 0.5, 0.2))
    assert monitor.state.status is TaskStatus.RUNNING and "dropped" in monitor.state.reason


def test_a_terminal_failure_waits_in_confirmation_mode_and_a_veto_drops_it():
    monitor = _monitor(confirm_decisions=True, low_progress_floor=0.5, low_progress_grace_s=1.0,
                       terminal_failures=frozenset({FailureKind.LOW_PROGRESS}))
    updates = [monitor.update(estimate(t, 0.05, 0.0)) for t in (0.5, 1.0, 1.5, 2.0, 2.5)]
    assert not any(u.step.terminal for u in updates) and monitor.state.status is TaskStatus.PENDING
    assert monitor.operator_verdict(2.6, Verdict.NOT_YET, "alice").accepted
    assert monitor.running and monitor.state.status is TaskStatus.RUNNING
    # The low-progress alarm fires once per stage, so a vetoed one stays quiet; a new episode's
    # pending failure, confirmed: the model's failure, ended by the operator.
    for t in (3.0, 4.0, 5.0):
        monitor.update(estimate(t, 0.05, 0.0))
    assert monitor.state.status is TaskStatus.RUNNING
    monitor.start_episode(build_task(TWO_STAGES), 10.0, episode_id="ep2")
    for t in (10.5, 11.0, 11.5, 12.0, 12.5):
        monitor.update(estimate(t, 0.05, 0.0))
    assert monitor.state.status is TaskStatus.PENDING
    end = monitor.operator_verdict(12.6, Verdict.FAILURE, "alice").update
    failure = [e for e in end.events if getattr(e, "kind", None) is FailureKind.LOW_PROGRESS]
    assert end.step.terminated and end.state.status is TaskStatus.FAILED
    assert failure and failure[0].terminal and "confirmed by operator alice" in failure[0].description


def test_a_takeover_flags_its_steps_pauses_the_stall_detector_and_is_counted(tmp_path):
    monitor = _monitor(tmp_path, stall_window_s=2.0, stall_min_delta=0.05)
    monitor.update(estimate(0.5, 0.3, 0.1))
    assert monitor.set_intervention(0.5, True, "alice", "teleop").accepted
    updates = [monitor.update(estimate(t, 0.3, 0.1)) for t in (1.0, 2.0, 3.0, 4.0, 5.0)]
    assert all(u.step.intervened for u in updates)
    assert not any(e for u in updates for e in u.events)  # no stall while a person drives
    assert monitor.state.intervention_active
    end = monitor.set_intervention(5.0, False, "alice")
    assert end.accepted and "4.5 s" in end.message
    assert not monitor.update(estimate(5.5, 0.3, 0.1)).step.intervened
    stall = [monitor.update(estimate(t, 0.3, 0.1)) for t in (6.0, 7.0, 8.0)]
    assert any(e.kind is FailureKind.STALL for u in stall for e in u.events)  # resumed, from the end
    assert monitor.state.interventions == 1 and monitor.state.intervention_s == pytest.approx(4.5)
    monitor.abort_episode(9.0, "test over")
    summary = [r for r in read_episode_log(monitor.log_path) if r["type"] == "summary"][-1]
    assert summary["interventions"] == 1 and summary["intervention_s"] == pytest.approx(4.5)


def test_bad_inputs_are_refused_with_the_reason_recorded_and_the_episode_goes_on(tmp_path):
    monitor = _monitor(tmp_path)
    monitor.update(estimate(1.0, 0.3, 0.1))
    refusals = {
        "unknown episode": monitor.operator_verdict(1.0, Verdict.SUCCESS, "alice", episode_id="nope"),
        "stage 2 is not running": monitor.operator_verdict(1.0, Verdict.SUCCESS, "alice", stage_number=2),
        "nothing to veto": monitor.operator_verdict(1.0, Verdict.NOT_YET, "alice"),
        "must name its source": monitor.operator_verdict(1.0, Verdict.SUCCESS, " "),
        "unknown verdict": monitor.operator_verdict(1.0, 7, "alice"),
        "an end needs a start": monitor.set_intervention(1.0, False, "alice"),
        "no alert": monitor.dismiss_alert(1.0, "", 0, "alice"),
        "is running": monitor.reset_done(1.0, "alice"),
    }
    for words, answer in refusals.items():
        assert not answer.accepted and words in answer.message, (words, answer.message)
    assert monitor.running and monitor.state.status is TaskStatus.RUNNING and monitor.state.stage_index == 0
    labels = _labels(monitor)
    assert len(labels) == len(refusals) and not any(r["applied"] or r["late"] for r in labels)


def test_opposite_verdicts_within_a_second_the_first_wins_and_a_later_one_is_a_late_label():
    monitor = _monitor(stages=["open the drawer"])
    monitor.update(estimate(1.0, 0.9, 0.9))
    assert monitor.operator_verdict(1.0, Verdict.SUCCESS, "alice", wall=100.0).accepted
    second = monitor.operator_verdict(1.0, Verdict.FAILURE, "bob", wall=100.4)
    assert not second.accepted and "first verdict wins" in second.message
    assert monitor.state.status is TaskStatus.SUCCEEDED and monitor.state.decider == "alice"
    late = monitor.operator_verdict(1.0, Verdict.FAILURE, "bob", wall=102.0)
    assert late.accepted and late.label.late and not late.label.applied
    assert monitor.state.status is TaskStatus.SUCCEEDED  # nothing changed
    # A verdict naming the ended episode once the next one runs: its late label, not the new one's.
    monitor.start_episode(build_task(["open the drawer"]), 3.0, episode_id="ep2")
    old = monitor.operator_verdict(3.0, Verdict.NOT_YET, "carol", episode_id="ep1")
    assert old.accepted and old.label.late and old.label.episode_id == "ep1" and monitor.running


def test_reset_done_after_an_end_is_taken_once_and_dismissal_marks_a_warning_a_false_alarm():
    monitor = _monitor(stall_window_s=1.0)
    for t in (0.5, 1.0, 2.0, 3.0):
        monitor.update(estimate(t, 0.3, 0.1))
    dismissed = monitor.dismiss_alert(3.0, "", 0, "alice", "it was thinking")
    assert dismissed.accepted and dismissed.label.alert_kind == FailureKind.STALL
    assert monitor.dismiss_alert(3.0, "", int(FailureKind.REGRESSION), "alice").accepted is False
    monitor.operator_verdict(3.0, Verdict.FAILURE, "alice")
    first = monitor.reset_done(3.5, "controller")
    assert first.accepted and first.label.kind is LabelKind.RESET_DONE and "start_episode" in first.message
    assert not monitor.reset_done(3.6, "controller").accepted
