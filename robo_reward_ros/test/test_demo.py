"""The README's first command: from an empty cache the demo runs and stops cleanly.

It builds its tiny checkpoint and episode bags, runs the reward node and a camera process playing
a Meta-World episode and a real robot clip, prints what the node publishes, and writes logs and
plots.
"""
import json
import os
import subprocess
import sys

import pytest


def test_demo_streams_sim_and_real_episodes_and_writes_logs_and_plots(tmp_path):
    pytest.importorskip("rosbags", reason="rosbags is not installed")
    from robo_reward_ros.evaluation.demo_assets import robot_clips_dir
    clips = 1 if robot_clips_dir() else 0
    out = tmp_path / "out"
    env = {**os.environ, "ROBO_REWARD_CACHE": str(tmp_path / "cache")}
    result = subprocess.run(
        [sys.executable, "-m", "robo_reward_ros.demo", "--scenario", "pick_place_dropped",
         "--clips", str(clips), "--out", str(out)],
        capture_output=True, text=True, timeout=300, env=env)
    stdout = result.stdout
    assert result.returncode == 0, stdout + result.stderr
    from robo_reward_ros.evaluation.demo_assets import trained_model_source
    if trained_model_source():
        assert "TRAINED HERE with robo-reward finetune" in stdout
    else:
        assert "TINY checkpoint with RANDOM weights" in stdout
    assert "exit codes [0, 0]" in stdout
    assert "ros2 launch robo_reward_ros reward.launch.py" in stdout  # the real-model line
    # Live output from the node, for the sim episode (and the clip when the data is here).
    assert "reward: pick_place_dropped stage 1 progress" in stdout, stdout
    assert "task_state: episode pick_place_dropped stage 1/1 running" in stdout
    with open(out / "episodes.json") as handle:
        episodes = {e["name"]: e for e in json.load(handle)["episodes"]}
    assert episodes["pick_place_dropped"]["outcome"] == "failure"
    assert episodes["pick_place_dropped"]["estimates"] > 3
    assert len(episodes) == 1 + clips
    for name in episodes:
        assert (out / "plots" / f"{name}.png").stat().st_size > 1000
    assert any(p.name.startswith("episode_pick_place_dropped")
               for p in (out / "episode-logs").iterdir())
