# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A real Meta-World environment here, the reward node (the demo model) in another process.

The Gymnasium wrapper publishes each step's camera frame and returns the node's reward and flags.
"""
import math
import time

import gymnasium
import pytest

from ros_fixtures import SCRIPTED_ENV, installed_executable, reward_node_argv
from scripted_backend import painted

TASK = ["open the drawer", "close the drawer"]
MAX_STEPS = 200


def test_metaworld_steps_get_the_nodes_rewards_and_the_episode_ends_on_its_decision(spawn, tmp_path):
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from robo_reward_ros.client import RewardClient
    from robo_reward_ros.client.gym_env import RewardNodeEnv
    from robo_reward_ros.simulation.metaworld_episodes import CornerCamera, expert_policy, make_env
    node = spawn([installed_executable("reward_node"), "--ros-args", "-p", "model.preset:=demo",
                  "-p", "model.device:=cpu", "-p", "inference.rate_hz:=20.0",
                  "-p", "failure.stall_window_sec:=4.0", "-p", "failure.low_progress_grace_sec:=5.0",
                  "-p", "timeout.episode_sec:=120.0", "-p", 'episode_log.directory:=""'],
                 env={"ROBO_REWARD_CACHE": str(tmp_path / "cache")})
    env, _ = make_env("drawer-open-v3", 0)
    camera = CornerCamera(env, 224)
    with RewardClient() as client:
        assert client.wait_for_node(120.0), node.output()
        wrapped = RewardNodeEnv(env, client, render=camera.render, instructions=TASK,
                                step_timeout_sec=30.0)
        obs, info_at_reset = wrapped.reset(seed=0)
        assert info_at_reset["episode_id"] and not info_at_reset["reward_missing"], info_at_reset
        policies = [expert_policy("drawer-open-v3"), expert_policy("drawer-close-v3")]
        rewards, infos, terminated, truncated = [], [], False, False
        for _ in range(MAX_STEPS):
            stage = infos[-1]["stage_index"] if infos and not infos[-1]["reward_missing"] else 0
            if infos and infos[-1].get("stage_succeeded"):
                stage += 1  # the step that finished a stage still names it
            action = policies[min(stage, 1)].get_action(obs)
            obs, reward, terminated, truncated, info = wrapped.step(action)
            rewards.append(reward)
            infos.append(info)
            if terminated or truncated:
                break
        camera.close()
    print(f"{len(rewards)} steps, return {sum(r for r in rewards if not math.isnan(r)):.3f}, "
          f"missing {sum(i['reward_missing'] for i in infos)}, end: {infos[-1].get('end_reason')}")
    assert not any(i["reward_missing"] for i in infos)  # a reward for every environment step
    assert any(i["stage_succeeded"] and i["stage_index"] == 0 for i in infos)  # stage 1 -> 2
    assert terminated and not truncated, infos[-1]  # the node decided: the task succeeded
    assert infos[-1]["stage_index"] == 1 and infos[-1]["stage_count"] == 2
    # Who decided, and no person took over: the model's own decisions, every step the policy's.
    assert infos[-1]["decided_by"] == "model" and not any(i["intervened"] for i in infos)
    assert all(i["decided_by"] == ("model" if i["stage_succeeded"] else "") for i in infos[:-1])
    # The rewards handed out are the node's episode return (the reset's first step included).
    assert info_at_reset["episode_return"] + sum(rewards) == pytest.approx(
        infos[-1]["episode_return"], abs=1e-3)
    assert all("env_reward" in i for i in infos)
    assert node.interrupt() == 0, node.output()


class PaintedEnv(gymnasium.Env):
    """An environment that stands still; its camera frame shows the scripted backend progress 0.3."""

    observation_space = gymnasium.spaces.Box(0.0, 1.0, (1,))
    action_space = gymnasium.spaces.Box(0.0, 1.0, (1,))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return [0.0], {}

    def step(self, action):
        return [0.0], 0.0, False, False, {}

    def render(self):
        return painted(0.3, 0.0)


def test_every_new_wrapper_gets_its_first_reset_scored(spawn):
    """A new publisher's first frame can reach a node that has not matched it yet, and be dropped.

    The wrapper resends it until the node has scored one; before, such a reset waited out the
    step timeout and came back with reward_missing (a quarter of first frames under load).

    The node refuses a frame stamped more than ``cameras.max_stamp_jump_sec`` (0.5 s here) after
    the previous one, but a reset starts an episode, after which any gap forward is taken: a
    lock-step controller that paused (to fine-tune, while a scene is reset) sends one frame and
    waits. Before, that frame and every later one were refused and the controller hung (seen in
    examples/rl_from_node_rewards.py: 30 s step timeouts, one after another).
    """
    from robo_reward_ros.client import RewardClient
    from robo_reward_ros.client.gym_env import RewardNodeEnv
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  "cameras.max_stamp_jump_sec:=0.5"),
                 env=SCRIPTED_ENV)
    with RewardClient() as client:
        assert client.wait_for_node(30.0), node.output()
        for attempt in range(12):
            wrapped = RewardNodeEnv(PaintedEnv(), client, step_timeout_sec=10.0)
            _, at_reset = wrapped.reset()
            assert not at_reset["reward_missing"], (attempt, at_reset)
            _, reward, _, _, info = wrapped.step([0.0])
            assert not info["reward_missing"], (attempt, info)
            # Resending made no step of its own: the agent got every reward of the episode.
            assert at_reset["episode_return"] + reward == pytest.approx(info["episode_return"],
                                                                        abs=1e-6), (attempt, info)
        published = []
        wrapped = RewardNodeEnv(PaintedEnv(), client, step_timeout_sec=10.0,
                                frame_sink=lambda stamp, rgb: published.append((stamp, rgb.shape)))
        for pause in (0.0, 1.5):
            time.sleep(pause)  # the controller's pause is what is tested here, not a wait for the node
            _, at_reset = wrapped.reset()
            _, _, _, _, info = wrapped.step([0.0])
            assert not at_reset["reward_missing"] and not info["reward_missing"], (pause, at_reset, info)
        # Each frame reached the sink once, as published (resends are not new frames).
        assert len(published) == 4 and all(shape == painted(0.3, 0.0).shape for _, shape in published)
        assert published[2][0] - published[1][0] > 1.5
    assert node.interrupt() == 0, node.output()
