# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episodes -> ROS 2 bags (MCAP, rosbags) -> episodes, and the Meta-World episode generator."""
import json

import numpy as np
import pytest

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.recordings.episode import Episode, FrameTruth

pytest.importorskip("rosbags", reason="rosbags is not installed")


def _episode():
    rng = np.random.default_rng(1)
    frames = [Frame(round(0.1 * i, 6), rng.integers(0, 256, (6, 8, 3), dtype=np.uint8))
              for i in range(5)]
    truth = [FrameTruth(0 if i < 3 else 1, i in (2, 4), 0.25 * i) for i in range(5)]
    return Episode("two_stage", ("open the drawer", "close the drawer"), frames, truth,
                   outcome="success", task="drawer", source="test", info={"seed": 7})


def test_bag_round_trip_keeps_frames_truth_and_metadata(tmp_path):
    from robo_reward_ros.recordings.episode_bag import read_episode_bag, write_episode_bag
    episode = _episode()
    path = write_episode_bag(episode, str(tmp_path / "bag"))
    assert list((tmp_path / "bag").glob("*.mcap")), "the bag is not MCAP"
    back = read_episode_bag(path)
    assert back.instructions == episode.instructions
    assert back.stamps == pytest.approx(episode.stamps, abs=1e-9)
    assert all(np.array_equal(a.rgb, b.rgb) for a, b in zip(back.frames, episode.frames))
    assert back.truth == episode.truth
    assert (back.outcome, back.task, back.info) == ("success", "drawer", {"seed": 7})
    assert back.success_stamp() == pytest.approx(0.4)  # last stage's first success frame


def test_bag_is_a_plain_ros2_bag(tmp_path):
    """Check that the bag uses standard message types only: any ROS 2 install can play it.

    Checked with rosbags' reader: topics, types, counts.
    """
    from rosbags.rosbag2 import Reader
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    path = write_episode_bag(_episode(), str(tmp_path / "bag"))
    with Reader(path) as reader:
        topics = {c.topic: (c.msgtype, c.msgcount) for c in reader.connections}
    assert topics == {"/camera/image_raw": ("sensor_msgs/msg/Image", 5),
                      "/instruction": ("std_msgs/msg/String", 1),
                      "/episode": ("std_msgs/msg/String", 1),
                      "/ground_truth": ("std_msgs/msg/String", 5)}


@pytest.fixture(scope="module")
def metaworld_available():
    # Before mujoco's first import: it picks the (headless) GL backend then.
    import robo_reward_ros.simulation.metaworld_episodes  # noqa: F401
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    pytest.importorskip("mujoco", reason="mujoco is not installed")


def test_dropped_puck_episode_has_its_failure_labelled(metaworld_available):
    from robo_reward_ros.simulation.metaworld_episodes import generate_episode, scenario_by_name
    episode = generate_episode(scenario_by_name("pick_place_dropped"), steps=70, size=48)
    assert len(episode.frames) == 70 and episode.frames[0].rgb.shape == (48, 48, 3)
    assert episode.stamps[1] - episode.stamps[0] == pytest.approx(0.1)
    assert (episode.outcome, episode.failure_kind, episode.failure_step) == ("failure", "drop", 42)
    assert not any(row.success for row in episode.truth)
    progress = [row.progress for row in episode.truth]
    # The puck rose toward the goal before the gripper opened, and fell back after.
    assert max(progress[:43]) > progress[-1] + 0.1, progress


def test_two_stage_episode_switches_stage_after_the_first_success(metaworld_available):
    from robo_reward_ros.simulation.metaworld_episodes import generate_episode, scenario_by_name
    episode = generate_episode(scenario_by_name("drawer_open_then_close"), steps=200, size=32)
    stages = [row.stage for row in episode.truth]
    switch = stages.index(1)
    assert episode.truth[switch - 1].success and set(stages[switch:]) == {1}
    assert episode.outcome == "success" and episode.success_stamp() > episode.stamps[switch]
    assert json.loads(json.dumps(episode.metadata()))["instructions"] == [
        "open the drawer", "close the drawer"]
