# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Replay the real Robometer-4B traces of three real robot clips through the monitor.

The traces come from one forward pass over all scored frames. The instruction precedes the
frames in the prompt and the model attends causally, so the outputs at frame i are what the
model gives on the prefix 0..i: replaying prefixes reproduces what the monitor would see online
(without frame subsampling). Frames are about 3 per second of video (data README), so frame i is
stamped i / 3 s.

What the clips show (checked on the videos): the Franka stacks the yellow cup on the other cup;
the WidowX puts the green stick in the brown bowl; the Jaco lifts the green cup from the blue
container at the very end, and the model stays unsure there (success probability 0.52 at best).
"""
import os

import pytest

from robo_reward_ros.core.events import (
    EpisodeEnded,
    FailureDetected,
    RewardEstimate,
    StageSucceeded,
    TaskStatus,
)
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task

np = pytest.importorskip("numpy", reason="numpy is not installed")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLIPS = os.path.normpath(os.path.join(REPO_ROOT, "..", "shared", "data", "robot-clips"))
FPS = 3.0
TRACES = {
    "berkeley_rpt_stack_cup": ("berkeley_rpt_stack_cup_rewards",
                               "Pick up the yellow cup and stack it on the other cup"),
    "soar_put_green_stick": ("soar_put_green_stick_in_brown_bowl_rewards",
                             "Put green stick in brown bowl"),
    "jaco_pick_up_green_cup": ("pick_up_green_cup_rewards", "Pick up the green cup"),
}
COMPLETED = {"berkeley_rpt_stack_cup", "soar_put_green_stick"}

pytestmark = pytest.mark.skipif(not os.path.isdir(CLIPS),
                                reason=f"robot clip traces not found at {CLIPS}")


def load(name):
    stem, instruction = TRACES[name]
    progress = np.load(os.path.join(CLIPS, stem + ".npy")).astype(float)
    success = np.load(os.path.join(CLIPS, stem + "_success_probs.npy")).astype(float)
    assert progress.shape == success.shape and progress.ndim == 1
    return progress, success, instruction


def replay_clip(name, config, use_success_head=True):
    progress, success, instruction = load(name)
    monitor = TaskMonitor(config)
    events = list(monitor.start_episode(build_task([instruction]), 0.0).events)
    stamps = np.arange(len(progress)) / FPS
    for i in range(len(progress)):
        events += monitor.update(RewardEstimate(
            stamp=stamps[i], camera="front", progress=progress[: i + 1],
            frame_stamps=stamps[: i + 1],
            success_prob=success[: i + 1] if use_success_head else None,
            backend="robometer-4b (recorded)")).events
    return monitor, events, progress, success, stamps


@pytest.mark.parametrize("name", sorted(TRACES))
def test_success_head_decisions(name):
    config = MonitorConfig()
    monitor, events, progress, success, stamps = replay_clip(name, config)
    decided = [e for e in events if isinstance(e, StageSucceeded)]
    failures = [e for e in events if isinstance(e, FailureDetected)]
    over = np.flatnonzero(success >= config.success_threshold)
    print(f"\n{name}: status={monitor.state.status.name} success at "
          f"{[round(e.stamp, 2) for e in decided]} s, first frame over "
          f"{config.success_threshold} at {[round(float(stamps[i]), 2) for i in over[:1]]} s, "
          f"failures={[(f.kind.name, round(f.stamp, 2)) for f in failures]}, "
          f"final progress={progress[-1]:.3f}, success prob={success[-1]:.3f}")
    assert failures == []  # no clip shows a failure within its few seconds
    if name in COMPLETED:
        assert monitor.state.status is TaskStatus.SUCCEEDED
        assert len(decided) == 1
        # Never before the evidence, and at most n - 1 estimates after the first vote.
        first_vote = stamps[over[0]]
        assert first_vote < decided[0].stamp <= stamps[over[0] + config.success_n - 1]
        assert isinstance(events[-1], EpisodeEnded) and events[-1].reset_requested
    else:
        assert decided == [] and monitor.state.status is TaskStatus.RUNNING


@pytest.mark.parametrize("name", sorted(COMPLETED))
def test_progress_alone_is_too_noisy_at_the_end_of_completions(name):
    """Check that the default progress rule (0.9 in 2 of 3) alone does not confirm these completions.

    Without the success head, within the clip, progress reaches 0.9 only on isolated frames. This
    is why the success head is preferred whenever the backend has one.
    """
    config = MonitorConfig()
    monitor, events, progress, _, _ = replay_clip(name, config, use_success_head=False)
    over = int(np.sum(progress[-config.success_n:] >= config.progress_success_threshold))
    print(f"\n{name} (progress only): status={monitor.state.status.name}, "
          f"last {config.success_n} progress={np.round(progress[-config.success_n:], 3)}")
    assert over < config.success_k
    assert monitor.state.status is TaskStatus.RUNNING
    assert not any(isinstance(e, StageSucceeded) for e in events)
