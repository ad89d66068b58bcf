# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The live node and the offline replay agree on the same bag.

The node's published windows, re-scored offline, give the same numbers, and both reach the same
decisions. Real rclpy; the installed reward_node runs as a separate process (scripts/setup.sh
installs it).
"""
import json
import os

import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")


def test_live_node_and_offline_replay_agree(tmp_path, tiny_robometer_dir):
    import robo_reward_ros.simulation.metaworld_episodes as mw  # sets MUJOCO_GL before mujoco
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from ros_fixtures import installed_executable
    installed_executable("reward_node")  # a clear failure when the workspace is not built
    from robo_reward_ros.replay.replay_run import run_replay
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    episode = mw.generate_episode(mw.scenario_by_name("pick_place_frozen"), steps=60, size=96)
    bag = write_episode_bag(episode, str(tmp_path / "frozen"))
    out = str(tmp_path / "replay")
    summary = run_replay([bag], out, model=tiny_robometer_dir, live=True, progress_bar=False,
                         params=["success.threshold=0.9", "failure.stall_window_sec=2"],
                         plots=False, log=lambda *_: None)
    agreement = summary["agreement"]
    with open(os.path.join(out, "agreement.json")) as handle:
        assert json.load(handle) == json.loads(json.dumps(agreement))
    assert agreement["compared"] == 1 and agreement["live_estimates"] >= 3, agreement
    # Same frames in, same numbers out: the node's windows re-scored offline.
    assert agreement["windows_rescored"] == agreement["live_estimates"], agreement["episodes"]
    assert agreement["model_max_abs_progress_diff"] <= 1e-5, agreement
    assert agreement["model_max_abs_success_diff"] <= 1e-5, agreement
    assert agreement["same_decisions"] == 1, agreement["episodes"]
