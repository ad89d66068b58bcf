# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Meta-World episodes from scripted experts, replayed through the monitor with its defaults.

Signals (generated at test time, cached for the session under pytest's tmp dir):
- progress: the environment's shaped reward / 10 (in [0, 1]; 1 when placed) plus Gaussian noise
  (sigma 0.03), standing in for a reward model's progress;
- success probability: ground-truth ``info["success"]`` mapped to 0.05 / 0.95 plus Gaussian
  noise (sigma 0.1), standing in for a success head.
Time: one environment step is stamped 0.1 s (a 10 Hz controller; Meta-World moves the hand by at
most 1 cm per step, so this gives real-robot speeds of <= 0.1 m/s), and the model scores every 5
steps (2 Hz). Ground truth labels each episode: success if ``info["success"]`` ever held.
"""
import dataclasses
import os
import warnings

import pytest

from robo_reward_ros.core.events import (
    EpisodeEnded,
    FailureDetected,
    RewardEstimate,
    StageSucceeded,
)
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task

np = pytest.importorskip("numpy", reason="numpy is not installed")

STEP_S = 0.1
SCORE_EVERY = 5
STEPS = 400
CONFIG = MonitorConfig(episode_timeout_s=STEPS * STEP_S)


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    env: str
    instruction: str
    mode: str  # expert | freeze | drop | noise
    seed: int = 0
    onset_step: int = 0  # where the scripted fault starts (freeze, drop)


SCENARIOS = [
    Scenario("reach expert", "reach-v3", "reach the goal", "expert"),
    Scenario("pick-place expert", "pick-place-v3", "pick up the puck and place it at the goal",
             "expert"),
    Scenario("drawer-open expert", "drawer-open-v3", "open the drawer", "expert"),
    # Expert cut at 80% of its first-success step (51), then the arm holds still with the
    # puck in its closed gripper.
    Scenario("pick-place truncated+frozen", "pick-place-v3",
             "pick up the puck and place it at the goal", "freeze", onset_step=41),
    # The gripper is forced open while carrying the puck: the puck drops.
    Scenario("pick-place dropped", "pick-place-v3", "pick up the puck and place it at the goal",
             "drop", onset_step=42),
    Scenario("pick-place noisy (sigma 1.0)", "pick-place-v3",
             "pick up the puck and place it at the goal", "noise", seed=3),
]


def record(scenario):
    """(reward / 10, success) per step of one episode."""
    metaworld = pytest.importorskip("metaworld", reason="metaworld is not installed")
    policies = pytest.importorskip("metaworld.policies", reason="metaworld is not installed")
    policy_class = {
        "reach-v3": policies.SawyerReachV3Policy,
        "pick-place-v3": policies.SawyerPickPlaceV3Policy,
        "drawer-open-v3": policies.SawyerDrawerOpenV3Policy,
    }[scenario.env]
    benchmark = metaworld.MT1(scenario.env, seed=scenario.seed)  # goal-observable tasks
    env = benchmark.train_classes[scenario.env]()
    env.set_task(benchmark.train_tasks[0])
    obs, _ = env.reset(seed=scenario.seed)
    policy = policy_class()
    rng = np.random.default_rng(scenario.seed)
    rewards, successes = [], []
    held_grip = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the policies warn about clipped gains
        for step in range(STEPS):
            action = np.asarray(policy.get_action(obs), dtype=float)
            if scenario.mode == "freeze" and step >= scenario.onset_step:
                grip = action[3] if step == scenario.onset_step else held_grip
                held_grip = grip
                action = np.array([0.0, 0.0, 0.0, grip])  # arm still, puck kept in hand
            elif scenario.mode == "drop" and step >= scenario.onset_step:
                action[3] = -1.0  # open
            elif scenario.mode == "noise":
                action = np.clip(action + rng.normal(0.0, 1.0, 4), -1.0, 1.0)
            obs, reward, _, _, info = env.step(action)
            rewards.append(reward / 10.0)
            successes.append(float(info["success"]))
    env.close()
    return np.asarray(rewards), np.asarray(successes)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    pytest.importorskip("mujoco", reason="mujoco is not installed")
    cache = tmp_path_factory.mktemp("metaworld_traces")
    out = {}
    for scenario in SCENARIOS:
        path = os.path.join(str(cache), scenario.name.replace(" ", "_") + ".npz")
        if not os.path.exists(path):
            rewards, successes = record(scenario)
            np.savez(path, rewards=rewards, successes=successes)
        data = np.load(path)
        out[scenario.name] = (data["rewards"], data["successes"])
    return out


def replay(scenario, rewards, successes, with_success_head, seed=0):
    rng = np.random.default_rng(seed)
    progress = np.clip(rewards + rng.normal(0.0, 0.03, rewards.shape), 0.0, 1.0)
    success_prob = np.clip(0.05 + 0.9 * successes + rng.normal(0.0, 0.1, rewards.shape), 0, 1)
    monitor = TaskMonitor(CONFIG)
    events = list(monitor.start_episode(build_task([scenario.instruction]), 0.0).events)
    for step in range(SCORE_EVERY - 1, STEPS, SCORE_EVERY):
        window = slice(0, step + 1)
        stamps = (np.arange(step + 1) + 1) * STEP_S
        events += monitor.update(RewardEstimate(
            stamp=stamps[-1], camera="corner", progress=progress[window], frame_stamps=stamps,
            success_prob=success_prob[window] if with_success_head else None,
            backend="metaworld-ground-truth")).events
        if not monitor.running:
            break
    return events


def first(events, kind):
    return next((e for e in events if isinstance(e, kind)), None)


def test_monitor_on_metaworld_episodes(traces):
    lines = []
    for scenario in SCENARIOS:
        rewards, successes = traces[scenario.name]
        succeeded = bool(successes.any())
        for head in (True, False):
            events = replay(scenario, rewards, successes, with_success_head=head)
            success = first(events, StageSucceeded)
            failures = [e for e in events if isinstance(e, FailureDetected)]
            end = first(events, EpisodeEnded)
            if succeeded:
                onset = (int(np.flatnonzero(successes)[0]) + 1) * STEP_S
                detected = success.stamp if success else None
            else:
                onset = (scenario.onset_step + 1) * STEP_S if scenario.onset_step else 0.0
                detected = failures[0].stamp if failures else None
            delay = None if detected is None else round(detected - onset, 2)
            lines.append(
                f"{scenario.name:30s} head={'yes' if head else 'no ':3s} truth="
                f"{'success' if succeeded else 'failure'} onset={onset:5.1f}s "
                f"decision={end.status.name if end else 'RUNNING':9s} first={detected} "
                f"delay={delay}s events={[(f.kind.name, f.stamp) for f in failures]}")
            if not head:
                continue  # progress-only decisions are reported, not asserted (see below)
            if succeeded:
                assert success is not None, scenario.name
                assert not any(f.task_failure and f.stamp < success.stamp for f in failures)
                assert 0.0 < delay <= CONFIG.success_n * SCORE_EVERY * STEP_S
            else:
                assert success is None, scenario.name
                assert any(f.task_failure for f in failures), scenario.name
    print("\n" + "\n".join(lines))


def test_dropped_puck_is_a_regression_and_frozen_arm_a_stall(traces):
    kinds = {}
    for scenario in SCENARIOS:
        if scenario.mode in ("freeze", "drop"):
            rewards, successes = traces[scenario.name]
            events = replay(scenario, rewards, successes, with_success_head=True)
            failures = [e for e in events if isinstance(e, FailureDetected)]
            kinds[scenario.mode] = failures[0].kind.name if failures else None
    assert kinds == {"freeze": "STALL", "drop": "REGRESSION"}
