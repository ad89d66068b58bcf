# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The operator in the loop through real rclpy: the node in its own process, a controller's client here.

In confirmation mode a veto of the model's success keeps the episode running, a confirmation ends
it (decided by the operator, on the terminal step, the reset request and the task state), a
takeover flags its steps and pauses the stall detector, and reset-done starts the next episode.
Every input is in the episode log, a flood of verdicts is refused as busy beyond the budget while
the episode goes on, and a SIGKILL right after an acknowledged verdict loses no label.
"""
import os
import time

import pytest
from robo_reward_msgs.msg import DecidedBy, OperatorLabel, OperatorVerdict, ResetRequest, TaskState

from robo_reward_ros.client import RewardClient, RewardNodeError
from robo_reward_ros.core.episode_log import read_episode_log
from robo_reward_ros.node.qos_profiles import EVENTS_QOS
from ros_fixtures import SCRIPTED_ENV, reward_node_argv, spin_until
from test_reward_client import Cameras


@pytest.fixture
def client():
    reward_client = RewardClient()
    yield reward_client
    reward_client.close()


def _labels(log_dir):
    records = []
    for name in sorted(os.listdir(log_dir)):
        records += [r for r in read_episode_log(os.path.join(log_dir, name)) if r["type"] == "OperatorLabel"]
    return records


def test_veto_takeover_confirmation_and_reset_done_through_a_real_node(ros_node, spawn, client, tmp_path):
    log_dir = tmp_path / "episodes"
    log_dir.mkdir(mode=0o700)
    node = spawn(reward_node_argv(
        "inference.rate_hz:=20.0", "success.k:=2", "success.n:=3", "cameras.stale_after_sec:=30.0",
        "failure.stall_window_sec:=1.0", "failure.low_progress_floor:=0.0",
        "operator.confirm_decisions:=true", "operator.confirm_timeout_sec:=600.0",
        "operator.start_after_reset_done:=true", log_dir=str(log_dir)), env=SCRIPTED_ENV)
    assert client.wait_for_node(30.0), node.output()
    resets = []
    ros_node.create_subscription(ResetRequest, "reset_request", resets.append, EVENTS_QOS)
    cameras = Cameras(ros_node, [node])
    episode = client.set_task(["open the drawer"])
    cameras.first_step(client, episode)

    def state():
        return client.task_state()

    def publish_until(condition, what, **frame):
        spin_until(ros_node, lambda: condition() or cameras.publish(**frame) is None, what=what,
                   processes=[node])

    # The model's success waits for an operator; a veto keeps the episode running.
    publish_until(lambda: state().status == TaskState.STATUS_PENDING, "a pending success",
                  progress=0.9, success=0.95)
    assert state().decided_by.source == DecidedBy.MODEL and "pending confirmation" in state().reason
    assert not any(s.terminated or s.stage_succeeded for s in client.steps(episode))
    veto = client.submit_verdict("not_yet", "alice", "the handle is still out")
    assert veto.applied and veto.model_decision.startswith("success pending confirmation")
    assert state().status == TaskState.STATUS_RUNNING and state().episode_id == episode

    # A takeover: its steps are flagged and a standstill longer than the stall window is no stall.
    client.set_intervention(True, "alice", "teleop to free the gripper")
    stamp = None
    for _ in range(30):  # 3 s of frames at 0.1 s: three stall windows
        stamp = cameras.publish(progress=0.4, success=0.0)
    flagged = client.wait_for_step(stamp, 10.0, episode)
    assert flagged.intervened and state().intervention_active
    with pytest.raises(RewardNodeError, match="already active"):
        client.set_intervention(True, "bob")
    client.set_intervention(False, "alice")
    assert not any(f.kind == f.KIND_STALL for f in client.failures(episode))

    # The model succeeds again; the operator confirms: the episode ends, decided by the operator.
    publish_until(lambda: state().status == TaskState.STATUS_PENDING, "a second pending success",
                  progress=0.95, success=0.95)
    confirm = client.submit_verdict("success", "alice", "drawer open")
    assert confirm.applied and "confirmed" in confirm.outcome
    spin_until(ros_node, lambda: any(s.terminated for s in client.steps(episode)) and resets,
               what="the terminal step and the reset request", processes=[node])
    (end,) = [s for s in client.steps(episode) if s.terminated or s.truncated]
    assert end.decided_by.source == DecidedBy.OPERATOR and end.decided_by.name == "alice"
    assert resets[-1].decided_by.source == DecidedBy.OPERATOR and state().status == TaskState.STATUS_SUCCEEDED
    assert end.reward > 0.9  # the success bonus, paid once it was confirmed

    # A second operator's opposite verdict within a second: refused, the first one stands.
    with pytest.raises(RewardNodeError, match="first verdict wins"):
        client.submit_verdict("failure", "bob", episode_id=episode)

    # Reset done: the node starts the next episode of the same task by itself.
    following = client.report_reset_done("controller", "drawer closed again")
    assert following and following != episode
    spin_until(ros_node, lambda: state().episode_id == following, what="the next episode",
               processes=[node])
    kinds = [(r["episode_id"], r["kind"], r["applied"]) for r in _labels(log_dir)]
    assert kinds == [(episode, OperatorLabel.KIND_VERDICT, True),
                     (episode, OperatorLabel.KIND_INTERVENTION_START, True),
                     (episode, OperatorLabel.KIND_INTERVENTION_START, False),
                     (episode, OperatorLabel.KIND_INTERVENTION_END, True),
                     (episode, OperatorLabel.KIND_VERDICT, True),
                     (episode, OperatorLabel.KIND_VERDICT, False),
                     (episode, OperatorLabel.KIND_RESET_DONE, True)]
    assert [(label.kind, label.applied) for label in client.labels(episode)][:2] == [
        (OperatorLabel.KIND_VERDICT, True), (OperatorLabel.KIND_INTERVENTION_START, True)]

    # A flood of verdicts (100 in a second on the topic): the node takes what its budget allows,
    # refuses the rest as busy with the reason, and goes on; the episode is untouched (vetoes of
    # nothing are refused too).
    cameras.first_step(client, following)
    flood = ros_node.create_publisher(OperatorVerdict, "reward_node/verdict", EVENTS_QOS)
    spin_until(ros_node, lambda: flood.get_subscription_count() > 0, what="the verdict topic", processes=[node])
    for index in range(100):
        flood.publish(OperatorVerdict(verdict=OperatorVerdict.NOT_YET, source="flood", reason=str(index)))
        time.sleep(0.01)  # pacing the flood at 100/s, not waiting for anything
    spin_until(ros_node, lambda: "operator input refused: busy: more than 20 operator inputs per second"
               in node.output(), what="the busy refusals", processes=[node])
    flooded = [label for label in client.labels(following) if label.source == "flood"]
    assert flooded and all(not label.applied and "nothing to veto" in label.outcome for label in flooded)
    assert state().episode_id == following and state().status == TaskState.STATUS_RUNNING

    # A verdict acknowledged (once the budget has room again), then SIGKILL: the label is on the disk.
    deadline = time.monotonic() + 10.0
    while True:
        try:
            failed = client.submit_verdict("failure", "alice", "gripper jammed")
            break
        except RewardNodeError as refused:
            assert "busy" in str(refused) and time.monotonic() < deadline, refused
    assert failed.applied
    node.kill()
    last = _labels(log_dir)[-1]
    assert (last["episode_id"], last["verdict"], last["reason"], last["applied"]) == (
        following, 2, "gripper jammed", True)
