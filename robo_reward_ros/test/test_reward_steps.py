# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward contract an RL controller reads, without ROS: one step per inference step.

Rate independence is measured on the demo model replaying Meta-World episodes through the node's
own pipeline, stepped in frame-stamp time at several rates (as robo-reward replay steps).
"""
import pytest

from robo_reward_ros.core.events import DenseRewardMode, TaskStatus
from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.frame_intake import ManualClock
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.reward_pipeline import RewardPipeline, WindowConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task
from monitor_traces import estimate
from scripted_backend import PixelScriptedBackend, painted

RATES_HZ = (1.0, 2.0, 5.0)
RETURN_TOLERANCE = 0.05  # measured spread: 0.000 (success) and 0.005 (dropped puck)


def replay_steps(model, episode, rate_hz, config, cameras=("cam",)):
    """Every RewardStep of the episode, stepped at ``rate_hz`` of frame time; aborted at its end."""
    pipeline = RewardPipeline(model, TaskMonitor(config), cameras,
                              WindowConfig(max_frames=32, min_interval_sec=0.1), clock=ManualClock())
    pipeline.set_task(build_task(list(episode.instructions)), None, start=True)
    steps, next_step = [], None
    for frame in episode.frames:
        for camera in cameras:
            pipeline.add_frame(camera, frame)
        next_step = frame.stamp if next_step is None else next_step
        if frame.stamp >= next_step - 1e-9:
            while next_step <= frame.stamp + 1e-9:
                next_step += 1.0 / rate_hz
            steps += [r.update.step for r in pipeline.step().results if r.update.step]
    end = pipeline.abort_episode(episode.frames[-1].stamp, "the recording ended")
    return steps + ([end.step] if end.step else [])


@pytest.fixture(scope="module")
def demo_model():
    from robo_reward_ros.models.backends.robometer import RobometerBackend
    from robo_reward_ros.models.loading.bundled_demo import trained_demo_checkpoint
    return RobometerBackend(trained_demo_checkpoint(), precision="fp32", device="cpu")


@pytest.mark.parametrize("scenario", ["pick_place_expert", "pick_place_dropped"])
def test_the_default_return_does_not_depend_on_the_step_rate(demo_model, scenario):
    """Before: the default (progress) return was the sum of phi over steps: it grew with the rate."""
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from robo_reward_ros.simulation.metaworld_episodes import generate_episode, scenario_by_name
    episode = generate_episode(scenario_by_name(scenario), 100, 224)
    config = MonitorConfig(stall_window_s=4.0, low_progress_grace_s=5.0)
    assert config.reward_mode is DenseRewardMode.DELTA
    returns, progress_returns = {}, {}
    for rate in RATES_HZ:
        steps = replay_steps(demo_model, episode, rate, config)
        assert sum(s.terminated or s.truncated for s in steps) == 1 and steps[-1].terminal
        returns[rate] = sum(s.reward for s in steps)
        assert returns[rate] == pytest.approx(steps[-1].episode_return, abs=1e-4)
        # What the progress mode would have paid on the same steps: the sum of the potentials.
        bonus = config.success_bonus if steps[-1].status is TaskStatus.SUCCEEDED else 0.0
        progress_returns[rate] = sum(s.task_progress for s in steps if s.cameras) + bonus
    print(f"{scenario}: delta returns {returns}; progress-mode returns {progress_returns}")
    assert max(returns.values()) - min(returns.values()) < RETURN_TOLERANCE
    assert progress_returns[5.0] > progress_returns[1.0] + 0.1  # the old default was not


def _painted_episode(progress_trace, period=0.5):
    class Episode:
        instructions = ("stack the cups",)
        frames = [Frame(period * (i + 1), painted(p, 0.0)) for i, p in enumerate(progress_trace)]
    return Episode


def test_one_step_per_inference_step_whatever_the_number_of_cameras():
    """Before: one reward per camera per step, so two cameras paid twice."""
    episode = _painted_episode([0.1, 0.2, 0.3, 0.5, 0.6, 0.7])
    config = MonitorConfig(reward_mode=DenseRewardMode.PROGRESS)  # the mode that showed it
    one = replay_steps(PixelScriptedBackend(), episode, 2.0, config, cameras=("front",))
    two = replay_steps(PixelScriptedBackend(), episode, 2.0, config, cameras=("front", "wrist"))
    assert len(one) == len(two) == len(episode.frames) + 1  # + the abort's terminal step
    assert all(s.cameras == ("front", "wrist") for s in two[:-1])
    assert [s.reward for s in two] == pytest.approx([s.reward for s in one])
    assert [s.step_index for s in two] == list(range(len(two)))


def _monitor(**overrides):
    monitor = TaskMonitor(MonitorConfig(success_k=1, success_n=1, **overrides))
    monitor.start_episode(build_task(["open the drawer", "close the drawer"]), 0.0)
    return monitor


def _terminal(updates):
    return [u.step for u in updates if u.step is not None and u.step.terminal]


def test_each_way_an_episode_ends_gives_exactly_one_terminal_step_with_gymnasium_flags():
    # The last stage succeeds: terminated, with the success bonus.
    monitor = _monitor()
    updates = [monitor.update(estimate(1.0, 0.5, 0.9)), monitor.update(estimate(2.0, 0.5, 0.9)),
               monitor.update(estimate(3.0, 0.5, 0.9))]
    (end,) = _terminal(updates)
    assert end.terminated and not end.truncated and end.status is TaskStatus.SUCCEEDED
    assert end.stage_index == 1 and end.stage_succeeded and end.reward == pytest.approx(1.5)
    assert updates[0].step.stage_succeeded and updates[0].step.stage_index == 0
    # A time limit found by the timer, with no estimate: truncated, the timeout bonus paid.
    monitor = _monitor(episode_timeout_s=5.0, timeout_bonus=-0.25)
    updates = [monitor.update(estimate(1.0, 0.4, 0.1)), monitor.tick(3.0), monitor.tick(6.0),
               monitor.tick(7.0)]
    (end,) = _terminal(updates)
    assert end.truncated and not end.terminated and end.status is TaskStatus.TIMED_OUT
    assert end.cameras == () and end.reward == pytest.approx(-0.25) and end.stamp == 6.0
    assert "over its 5.0 s limit" in end.reason
    # A terminal failure: terminated, the failure bonus paid.
    monitor = _monitor(low_progress_floor=0.5, low_progress_grace_s=1.0,
                       terminal_failures=frozenset({3}))
    updates = [monitor.update(estimate(t, 0.05, 0.0)) for t in (0.5, 1.0, 1.5, 2.0, 2.5)]
    (end,) = _terminal(updates)
    assert end.terminated and end.status is TaskStatus.FAILED and end.reward == pytest.approx(-1.0)
    # An abort (operator stop, new task): truncated, nothing earned, once.
    monitor = _monitor()
    updates = [monitor.update(estimate(1.0, 0.3, 0.1)), monitor.abort_episode(2.0, "operator"),
               monitor.abort_episode(3.0, "again")]
    (end,) = _terminal(updates)
    assert end.truncated and end.reward == 0.0 and end.reason == "aborted: operator"


def test_a_query_scores_now_with_the_trend_and_feeds_no_decision():
    pipeline = RewardPipeline(PixelScriptedBackend(), TaskMonitor(MonitorConfig()), ("front",),
                              WindowConfig(max_frames=8, min_interval_sec=0.0), clock=ManualClock())
    with pytest.raises(RuntimeError, match="no episode is running"):
        pipeline.query_now()
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    with pytest.raises(RuntimeError, match="no frame of the current stage"):
        pipeline.query_now()
    for i, progress in enumerate([0.1, 0.2, 0.3, 0.4]):
        pipeline.add_frame("front", Frame(1.0 + i, painted(progress, 0.2)))
        pipeline.step()
    pipeline.add_frame("front", Frame(5.0, painted(0.8, 0.6)))
    accepted = pipeline.monitor.state.estimates_accepted
    query = pipeline.query_now()
    assert query.progress == pytest.approx(0.8, abs=0.01) and query.stamp == 5.0
    assert query.success_prob == pytest.approx(0.6, abs=0.01)
    assert query.trend_per_sec == pytest.approx(0.1, abs=0.01) and not query.stalled
    assert pipeline.monitor.state.estimates_accepted == accepted  # no decision came of it
