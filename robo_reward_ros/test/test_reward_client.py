# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The RL contract through real rclpy: the node in its own process, a controller's RewardClient here.

Steps (one per inference step, fused over cameras), terminal steps found by the node's timer, and
the bad inputs a controller meets: a node not up yet, a stamp older than the steps kept, two
controllers starting episodes at once, a node restarted mid-episode.
"""
import signal
import threading
import time

import pytest
from rclpy.qos import qos_profile_sensor_data
from robo_reward_msgs.msg import RewardEstimate, TaskState
from sensor_msgs.msg import Image

from robo_reward_ros.client import (EpisodeGone, RewardClient, RewardNodeError, StepTimeout,
                                    StepUnavailable)
from robo_reward_ros.core.stamps import to_seconds
from robo_reward_ros.node.qos_profiles import EVENTS_QOS
from ros_fixtures import SCRIPTED_ENV, participant, reward_node_argv, spin_until
from scripted_backend import painted
from test_reward_node import rgb_image

TWO_CAMERAS = "cameras.topics:=[front/image_raw, wrist/image_raw]"
RESEND_SEC = 0.5


@pytest.fixture
def client():
    reward_client = RewardClient()
    yield reward_client
    reward_client.close()


class Cameras:
    """Painted frames on several camera topics, each frame stamped the same on every camera.

    Frames are best effort, so one published before the node's subscription is discovered is
    simply lost: the constructor waits for that discovery. That is only this side's half: the
    node may not have matched the new publisher yet, and drops what it sends until it has
    (first_step resends).
    """

    def __init__(self, node, processes, topics=("camera/image_raw",), start=100.0):
        self.pubs = [node.create_publisher(Image, t, qos_profile_sensor_data) for t in topics]
        self.node, self.pids = node, [p.popen.pid for p in processes]
        self.stamp = start
        spin_until(node, lambda: all(p.get_subscription_count() > 0 for p in self.pubs),
                   what="the reward node's camera subscriptions", processes=processes)

    def publish(self, progress=0.3, success=0.0, step=0.1):
        self.stamp += step
        for pub in self.pubs:
            pub.publish(rgb_image(painted(progress, success), self.stamp))
        return self.stamp

    def first_step(self, client, episode, timeout=10.0):
        """Publish until the node scores a frame; return the first frame's stamp and its step."""
        first = self.publish()
        deadline = time.monotonic() + timeout
        while True:
            try:
                return first, client.wait_for_step(first, RESEND_SEC, episode)
            except StepTimeout as timed_out:
                if time.monotonic() > deadline:
                    from dds_evidence import stall_report
                    pytest.fail(f"{timed_out}\n{stall_report(self.node, self.pids)}")
                self.publish()


def test_a_client_before_the_node_then_one_fused_step_per_inference_step(ros_node, spawn, client):
    with pytest.raises(RewardNodeError, match="no reward node answers"):
        client.start_episode(timeout_sec=0.5)
    # This test's estimate listener exists before the node, as the client does: one made once the
    # node was up was matched by the node's publisher after its first estimates once (three test
    # workers on two cores), and those estimates (volatile) never reached it.
    estimates = []
    listener = ros_node.create_subscription(RewardEstimate, "reward", estimates.append, EVENTS_QOS)
    node = spawn(reward_node_argv(TWO_CAMERAS, "inference.rate_hz:=20.0"), env=SCRIPTED_ENV)
    assert client.wait_for_node(30.0), node.output()
    spin_until(ros_node, lambda: listener.get_publisher_count() > 0, what="the node's estimates",
               processes=[node])
    cameras = Cameras(ros_node, [node], ("front/image_raw", "wrist/image_raw"))
    episode = client.set_task(["stack the cups"])
    steps = []
    for i in range(8):
        stamp = cameras.publish(progress=0.1 + 0.05 * i)
        try:
            steps.append(client.wait_for_step(stamp, 5.0, episode))
        except StepTimeout:  # a best-effort frame lost: the next one is covered
            continue
    assert len(steps) >= 4

    def estimates_of(step):
        return [e for e in estimates if e.episode_id == episode
                and e.header.stamp == step.header.stamp and e.camera in step.cameras]

    # Every step's own estimates (a count over all of them can be met by the estimates of a
    # step whose wait timed out above, before the last step's second camera is in).
    def lacking():
        missing = [f"{to_seconds(s.header.stamp):.1f} s {list(s.cameras)}" for s in steps
                   if len(estimates_of(s)) < len(s.cameras)]
        seen = [f"{to_seconds(e.header.stamp):.1f} s {e.camera}" for e in estimates]
        return f"steps missing an estimate: {missing}; estimates seen: {seen}"

    spin_until(ros_node, lambda: all(len(estimates_of(s)) >= len(s.cameras) for s in steps),
               what="the per-camera estimates", processes=[node], lacking=lacking)
    for step in steps:
        assert set(step.cameras) <= {"front/image_raw", "wrist/image_raw"} and step.cameras
        # One estimate per camera of the step, each with the step's reward: never add them up.
        same = estimates_of(step)
        assert sorted(e.camera for e in same) == sorted(step.cameras), (step, estimates)
        assert all(e.reward == pytest.approx(step.reward) for e in same)
    received = client.steps(episode)
    assert [s.step_index for s in received] == list(range(len(received)))
    assert received[-1].episode_return == pytest.approx(sum(s.reward for s in received), abs=1e-4)
    assert any(len(s.cameras) == 2 for s in received)  # fused: both cameras in one step
    assert client.query_progress().progress == pytest.approx(0.45, abs=0.01)
    assert node.interrupt() == 0, node.output()


def test_a_time_limit_found_by_the_timer_ends_with_one_truncated_step(ros_node, spawn, client):
    """Before: the timer's terminal reward was computed and never published."""
    node = spawn(reward_node_argv("timeout.episode_sec:=1.5", "cameras.stale_after_sec:=30.0"),
                 env=SCRIPTED_ENV)
    assert client.wait_for_node(30.0), node.output()
    cameras = Cameras(ros_node, [node])
    episode = client.set_task(["stack the cups"])
    cameras.first_step(client, episode)
    # No more frames: only the node's timer can end the episode.
    end = client.wait_for_step(1e12, 10.0, episode)
    assert end.truncated and not end.terminated and end.status == TaskState.STATUS_TIMED_OUT
    assert list(end.cameras) == [] and "limit" in end.end_reason
    terminal = [s for s in client.steps(episode) if s.terminated or s.truncated]
    assert len(terminal) == 1
    assert node.interrupt() == 0, node.output()


def test_a_step_older_than_the_kept_ones_is_refused_not_made_up(ros_node, spawn):
    node = spawn(reward_node_argv("inference.rate_hz:=20.0"), env=SCRIPTED_ENV)
    with RewardClient(history=3) as client:
        assert client.wait_for_node(30.0), node.output()
        cameras = Cameras(ros_node, [node])
        episode = client.set_task(["stack the cups"])
        first, _ = cameras.first_step(client, episode)
        for _ in range(6):
            stamp = cameras.publish()
            try:
                client.wait_for_step(stamp, 5.0, episode)
            except StepTimeout:
                continue
        with pytest.raises(StepUnavailable, match="keeps the newest 3 steps"):
            client.wait_for_step(first, 1.0, episode)
        with pytest.raises(StepTimeout):  # a frame nobody sent: missing, not zero
            client.wait_for_step(cameras.stamp + 100.0, 0.5, episode)
    assert node.interrupt() == 0, node.output()


def test_two_controllers_starting_episodes_at_once_both_get_answers(ros_node, spawn):
    node = spawn(reward_node_argv("instruction:=stack the cups"), env=SCRIPTED_ENV)
    with RewardClient() as first, RewardClient() as second:
        assert first.wait_for_node(30.0) and second.wait_for_node(30.0), node.output()
        ids, barrier = {}, threading.Barrier(2)

        def start(name, client):
            barrier.wait()
            ids[name] = client.start_episode(reason=f"controller {name}")

        threads = [threading.Thread(target=start, args=(n, c))
                   for n, c in (("a", first), ("b", second))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30.0)
        assert len(set(ids.values())) == 2, ids  # two answers, two episodes
        spin_until(ros_node, lambda: first.task_state() is not None
                   and first.task_state().episode_id in ids.values(),
                   what="the task state of the episode that won", processes=[node])
        current = first.task_state().episode_id
        replaced = next(i for i in ids.values() if i != current)
        with pytest.raises(EpisodeGone, match=f"episode {replaced} is no longer running"):
            first.wait_for_step(1e12, 5.0, replaced)
    assert node.interrupt() == 0, node.output()


def test_a_node_restarted_mid_episode_is_an_episode_gone_not_a_hang(ros_node, spawn, client):
    argv = reward_node_argv("instruction:=stack the cups")
    node = spawn(argv, env=SCRIPTED_ENV)
    assert client.wait_for_node(30.0), node.output()
    cameras = Cameras(ros_node, [node])
    episode = client.start_episode()
    cameras.first_step(client, episode)
    node.popen.send_signal(signal.SIGKILL)
    node.popen.wait(30)
    restarted = spawn(argv, env=SCRIPTED_ENV)
    with participant("after_restart") as after:  # not ros_node's cameras: see participant()
        cameras = Cameras(after, [restarted], start=cameras.stamp)
        spin_until(after, lambda: cameras.publish() and client.task_state() is not None
                   and client.task_state().episode_id not in ("", episode),
                   what="the restarted node's episode", processes=[restarted])
    with pytest.raises(EpisodeGone):
        client.wait_for_step(cameras.stamp + 10.0, 5.0, episode)
    assert to_seconds(client.latest_step().header.stamp) > 0.0
    assert restarted.interrupt() == 0, restarted.output()


EXITS_WITHOUT_CLOSE = """
import time
from robo_reward_ros.client import RewardClient
client = RewardClient()
time.sleep(0.3)
print("exiting without close()", flush=True)
"""


def test_a_script_that_exits_without_closing_its_client_exits_cleanly():
    # Before the client closed itself at exit, every such run aborted (exit 134, "terminate called
    # without an active exception"): its spinning thread was inside rclpy when Python finalized.
    import subprocess
    import sys
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", EXITS_WITHOUT_CLOSE], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "exiting without close()" in done.stdout and "terminate called" not in done.stderr
