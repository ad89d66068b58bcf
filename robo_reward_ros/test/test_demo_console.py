# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The demo's compact console, fed real robo_reward_msgs / diagnostic_msgs messages as the node sends them.

The cases of issue 18: a header per episode, a state line only when the state changes (the node
republishes ``running (episode started)`` after every event), no ``stage 1/0`` for idle, stages
counted from 1, /diagnostics only on a change of level, and everything with ``verbose``.
"""
import numpy as np
import pytest

pytest.importorskip("robo_reward_msgs.msg", reason="the message package is not built")

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from robo_reward_msgs.msg import FailureEvent, RewardEstimate, TaskState  # noqa: E402

from robo_reward_ros.core.frame import Frame  # noqa: E402
from robo_reward_ros.demo_console import DemoConsole  # noqa: E402
from robo_reward_ros.recordings.episode import Episode, FrameTruth  # noqa: E402

BASE = 1000.0  # the camera's clock when an episode's first frame was sent


def _stamp(msg_stamp, seconds):
    msg_stamp.sec, msg_stamp.nanosec = int(seconds), int(round((seconds % 1) * 1e9))


def _episode(name, instructions, outcome="success"):
    frames = [Frame(i * 0.1, np.zeros((4, 4, 3), np.uint8)) for i in range(50)]
    stages = len(instructions)
    truth = [FrameTruth(min(i * stages // 50, stages - 1), i >= 45, i / 50) for i in range(50)]
    return Episode(name, tuple(instructions), frames, truth, outcome=outcome,
                   failure_kind="drop" if outcome == "failure" else "",
                   failure_step=20 if outcome == "failure" else None)


def _state(episode, status, stage=0, count=1, reason="episode started", instruction="pick"):
    msg = TaskState(episode_id=episode, stage_index=stage, stage_count=count, status=status,
                    reason=reason, instruction=instruction)
    _stamp(msg.header.stamp, BASE)
    return msg


def _estimate(episode, t, progress, stage=0, success=False):
    msg = RewardEstimate(episode_id=episode, stage_index=stage, progress=progress, reward=0.1,
                         has_success_probability=True, success_probability=0.5, success=success,
                         inference_latency_sec=0.05)
    _stamp(msg.header.stamp, BASE + t)
    first = msg.header.stamp.__class__()
    _stamp(first, BASE)
    msg.frame_stamps = [first]
    return msg


def _failure(episode, t, kind=FailureEvent.KIND_STALL, task_failure=True):
    msg = FailureEvent(episode_id=episode, kind=kind, task_failure=task_failure,
                       description="no progress gain above 0.05 for 4.0 s")
    _stamp(msg.header.stamp, BASE + t)
    return msg


def _diagnostics(level, message, name="/reward_node: camera camera/image_raw"):
    return DiagnosticArray(status=[DiagnosticStatus(level=level, name=name, message=message)])


def _console(verbose=False):
    lines = []
    episodes = [_episode("pick_a", ["pick"]), _episode("drawer_b", ["open", "close"], "failure")]
    return DemoConsole(episodes, verbose, write=lines.append, color=False), lines


def test_one_header_per_episode_and_no_repeated_state_lines():
    console, lines = _console()
    console.state(_state("", TaskState.STATUS_IDLE, count=0, reason="", instruction=""))
    for _ in range(3):  # the node republishes the state after each event
        console.state(_state("pick_a", TaskState.STATUS_RUNNING))
    console.estimate(_estimate("pick_a", 0.5, 0.2))
    console.failure(_failure("pick_a", 4.2))
    console.state(_state("pick_a", TaskState.STATUS_RUNNING))
    console.estimate(_estimate("pick_a", 4.5, 0.9, success=True))
    console.state(_state("pick_a", TaskState.STATUS_SUCCEEDED, reason="all 1 stage(s) succeeded"))
    console.state(_state("pick_a", TaskState.STATUS_SUCCEEDED, reason="all 1 stage(s) succeeded"))
    console.state(_state("drawer_b", TaskState.STATUS_RUNNING, count=2, instruction="open"))
    text = "\n".join(lines)
    assert "stage 1/0" not in text and "idle, no task yet" in lines[0]
    assert [line for line in lines if line.startswith("==")] == [
        "== episode 1/2: pick_a ==", "== episode 2/2: drawer_b =="]
    assert lines[2:4] == ["   task: 'pick'", "   truth: success, reached at 4.5 s"]
    assert sum("running stage 1/1" in line for line in lines) == 1
    assert sum("SUCCEEDED" in line for line in lines) == 1
    assert "    0.5 s  stage 1/1  progress 0.200" in text
    assert "!!   4.2 s  stall: no progress gain" in text
    assert "<< stage succeeded" in lines[lines.index(next(x for x in lines if "4.5 s  stage" in x))]
    assert "stage 1: 'open'  stage 2: 'close'" in text and "truth: failure (drop), from 2.0 s" in text
    assert "camera_stale" not in text


def test_stages_count_from_one_through_a_stage_change():
    console, lines = _console()
    console.state(_state("drawer_b", TaskState.STATUS_RUNNING, count=2, instruction="open"))
    console.estimate(_estimate("drawer_b", 3.0, 0.8))
    # The node's state after stage index 0 succeeded: index 1 now runs ('close').
    console.state(_state("drawer_b", TaskState.STATUS_STAGE_SUCCEEDED, stage=1, count=2,
                         instruction="close", reason="stage 1 succeeded: success probability >= 0.65"))
    console.state(_state("drawer_b", TaskState.STATUS_RUNNING, stage=1, count=2, instruction="close",
                         reason="stage 1 succeeded: success probability >= 0.65"))
    console.estimate(_estimate("drawer_b", 3.5, 0.1, stage=1))
    text = "\n".join(lines)
    assert ">> stage 1 succeeded: success probability >= 0.65; next stage 2/2: 'close'" in text
    assert sum("stage 1 succeeded" in line for line in lines) == 1  # running after it: no new line
    assert "3.0 s  stage 1/2" in text and "3.5 s  stage 2/2" in text
    assert "stage 0" not in text and "stage 3" not in text


def test_diagnostics_only_on_a_change_of_level_and_everything_when_verbose():
    console, lines = _console()
    ok, warn = DiagnosticStatus.OK, DiagnosticStatus.WARN
    for message in ("receiving at 10.0 Hz", "receiving at 9.9 Hz", "receiving at 10.1 Hz"):
        console.diagnostics(_diagnostics(ok, message))
    assert lines == []
    console.diagnostics(_diagnostics(warn, "stale: no frame for 2.1 s"))
    console.diagnostics(_diagnostics(warn, "stale: no frame for 3.1 s"))
    console.diagnostics(_diagnostics(ok, "receiving at 10.0 Hz"))
    assert lines == ["!! diagnostics WARN: /reward_node: camera camera/image_raw: stale: no frame for 2.1 s",
                     "   diagnostics OK: /reward_node: camera camera/image_raw: receiving at 10.0 Hz"]

    console, lines = _console(verbose=True)
    for message in ("receiving at 10.0 Hz", "receiving at 9.9 Hz"):
        console.diagnostics(_diagnostics(ok, message))
    console.state(_state("pick_a", TaskState.STATUS_RUNNING))
    console.state(_state("pick_a", TaskState.STATUS_RUNNING))
    console.estimate(_estimate("pick_a", 0.5, 0.2))
    assert lines == [
        "diagnostics: /reward_node: camera camera/image_raw: receiving at 10.0 Hz {}",
        "diagnostics: /reward_node: camera camera/image_raw: receiving at 9.9 Hz {}",
        "task_state: episode pick_a stage 1/1 running: 'pick' (episode started)",
        "task_state: episode pick_a stage 1/1 running: 'pick' (episode started)",
        "reward: pick_a stage 1 progress 0.200 success_p 0.50 reward +0.100 frames 1 latency 50 ms"]


def test_idle_without_a_task_is_not_stage_1_of_0_in_verbose_either():
    console, lines = _console(verbose=True)
    console.state(_state("", TaskState.STATUS_IDLE, count=0, reason="", instruction=""))
    assert lines == ["task_state: idle, no task yet"]


def test_a_pending_decision_the_operators_veto_and_the_summary_say_who_decided_what():
    from robo_reward_msgs.msg import DecidedBy, OperatorLabel, OperatorVerdict

    from robo_reward_ros.demo_console import operator_summary
    from robo_reward_ros.simulation.scripted_operator import judge_pending
    lines = []
    episode = _episode("drawer", ["open the drawer"])  # truth: done from 4.5 s
    console = DemoConsole([episode], write=lines.append, color=False)
    console.estimate(_estimate("drawer", 0.5, 0.3))
    # The model says success at 2.0 s: the ground truth says not yet, so the scripted operator vetoes.
    pending = _state("drawer", TaskState.STATUS_PENDING, reason="success pending confirmation (rule); "
                     "waiting for an operator to confirm or veto, applied after 5 s")
    pending.pending_success = True
    pending.decided_by = DecidedBy(source=DecidedBy.MODEL)
    _stamp(pending.header.stamp, BASE + 2.0)
    judgement = judge_pending(episode, 0, True, console.episode_time("drawer", BASE + 2.0))
    assert (judgement.verdict, judgement.reason) == ("not_yet", "stage 1 is not done at 2.0 s (ground truth)")
    assert judge_pending(episode, 0, True, 4.6).verdict == "success"
    veto = OperatorLabel(episode_id="drawer", kind=OperatorLabel.KIND_VERDICT, verdict=OperatorVerdict.NOT_YET,
                         source="scripted-operator", reason=judgement.reason, applied=True,
                         outcome="vetoed the model's pending success; stage 1 goes on")
    _stamp(veto.header.stamp, BASE + 2.0)
    back = _state("drawer", TaskState.STATUS_RUNNING, reason="vetoed")
    end = _state("drawer", TaskState.STATUS_SUCCEEDED, reason="all 1 stage(s) succeeded")
    end.decided_by = DecidedBy(source=DecidedBy.OPERATOR, name="scripted-operator")
    _stamp(end.header.stamp, BASE + 4.6)
    for msg in (_state("drawer", TaskState.STATUS_RUNNING), pending):
        console.state(msg)
    console.label(veto)
    console.state(back)
    console.state(end)
    shown = "\n".join(lines)
    assert ("?? stage 1/1: the model says it succeeded; waiting for the operator to confirm or veto "
            "(applied after 5 s)") in shown
    assert ("op   2.0 s  operator scripted-operator: NOT_YET, stage 1 is not done at 2.0 s (ground truth) "
            "-> applied: vetoed the model's pending success; stage 1 goes on") in shown
    assert "   back to work on stage 1/1" in shown
    assert ">> SUCCEEDED, decided by the operator (scripted-operator)" in shown
    summary = operator_summary(["drawer"], [pending, back, end], [veto], console.episode_time)
    assert ("drawer: model: stage 1 success at 2.0 | operator: not_yet at 2.0 | final: succeeded, "
            "decided by the operator (scripted-operator)") in summary
