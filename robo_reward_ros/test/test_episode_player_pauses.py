# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The demo's camera between episodes: its pauses are not camera faults, a real silence still is.

Issue 18: the demo reported a stale camera between its own episodes. The camera process
(node/live_replay.py's EpisodePlayer) publishes an episode's last frame, then waits for the
node's estimate of it before the next episode's set_task ends the episode. Scoring that last
window takes a step period plus the model's latency, which on a busy CPU is longer than the
node's stale limit (2 s): the node saw a camera fall silent while an episode ran. Here a real
reward node with the scripted backend made slower than the stale limit (PIXEL_SCRIPTED_DELAY_SEC)
reproduces it every time: the player that goes silent is reported stale (the node's stale rule is
untouched), the one that holds its last image, as a real camera shows a robot standing still,
is not, and still gets the estimate of every episode's last frame.
"""
import pytest

pytest.importorskip("robo_reward_msgs.msg", reason="the message package is not built")

from robo_reward_msgs.msg import FailureEvent  # noqa: E402
from ros_fixtures import SCRIPTED_ENV, reward_node_argv  # noqa: E402
from scripted_backend import painted  # noqa: E402

from robo_reward_ros.core.frame import Frame  # noqa: E402
from robo_reward_ros.recordings.episode import Episode  # noqa: E402
from robo_reward_ros.node.live_replay import EpisodePlayer  # noqa: E402

SLOWER_THAN_STALE_LIMIT_SEC = 2.5  # the node's cameras.stale_after_sec stays at its default, 2.0


def _episode(name):
    """One second of camera at 10 Hz with rising progress (the scripted model reads the colours)."""
    frames = [Frame(i * 0.1, painted(0.1 + 0.05 * i, 0.0)) for i in range(10)]
    return Episode(name, ("stack the cups",), frames)


def _stale(player, episode):
    return [f for f in player.failures
            if f.episode_id == episode and f.kind == FailureEvent.KIND_CAMERA_STALE]


def test_held_pauses_are_not_stale_but_a_silent_camera_is(spawn, tmp_path):
    node = spawn(reward_node_argv("inference.rate_hz:=2.0", "failure.low_progress_grace_sec:=100.0",
                                  "failure.stall_window_sec:=100.0", log_dir=str(tmp_path / "logs")),
                 env={**SCRIPTED_ENV, "PIXEL_SCRIPTED_DELAY_SEC": str(SLOWER_THAN_STALE_LIMIT_SEC)})
    player = EpisodePlayer(rate_hz=2.0, process=node.popen, log_path=node.log_path)
    try:
        offsets = {}
        for name in ("held_first", "held_second"):
            offsets[name] = player.play(_episode(name), hold_last_frame=True)
        player.play(_episode("silent"), hold_last_frame=False)
    finally:
        player.close()
    assert node.interrupt() == 0, node.output()
    for name in ("held_first", "held_second"):
        assert _stale(player, name) == [], [f.description for f in _stale(player, name)]
        # The player waited for the estimate of the last recorded frame (0.9 s into the episode).
        newest = max(e.header.stamp.sec + e.header.stamp.nanosec * 1e-9
                     for e in player.estimates if e.episode_id == name)
        assert newest - offsets[name] >= 0.9 - 1e-3
    # The same wait with a silent camera: a real silence while an episode runs is reported.
    stale = _stale(player, "silent")
    assert len(stale) == 1 and not stale[0].task_failure and not stale[0].terminal
