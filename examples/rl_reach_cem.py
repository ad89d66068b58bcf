# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A small agent trained on Meta-World reach from the reward node's rewards alone, beside the same
agent trained on the environment's own reward; both learning curves in one plot.

    python examples/rl_reach_cem.py --minutes 25 --out ~/.cache/robo_reward_ros/rl-example

The agent is the cross-entropy method (CEM) over a linear policy, a = clip(W (goal - hand) + b),
12 parameters: small enough to learn on 2 CPU cores within the budget. With ``--reward node`` the
episode return is what the node pays (``RewardNodeEnv``: the demo model, started here as a
process of its own with ``model_preset:=demo``, scoring the corner camera's frames); with
``--reward env`` it is Meta-World's shaped reward. Success is Meta-World's own ``info["success"]``
in both: the ground truth neither agent was trained on.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

EPISODE_STEPS = 50
POPULATION, ELITES = 8, 3
INSTRUCTION = "reach the goal position"
NODE_PARAMETERS = ["model.preset:=demo", "model.device:=cpu", "inference.rate_hz:=20.0",
                   "failure.stall_window_sec:=4.0", "failure.low_progress_grace_sec:=5.0",
                   'episode_log.directory:=""']


def policy_action(theta: np.ndarray, obs: np.ndarray) -> np.ndarray:
    weights, bias = theta[:9].reshape(3, 3), theta[9:]
    move = np.clip(weights @ (obs[-3:] - obs[:3]) * 10.0 + bias, -1.0, 1.0)
    return np.concatenate([move, [0.0]])


def run_episode(env, theta: np.ndarray):
    """Return (return, success) of one episode; NaN rewards (missing node steps) are dropped."""
    obs, _ = env.reset()
    total, success = 0.0, False
    for _ in range(EPISODE_STEPS):
        obs, reward, terminated, truncated, info = env.step(policy_action(theta, obs))
        total += 0.0 if math.isnan(reward) else float(reward)
        success = success or bool(info.get("success", 0.0))
        if terminated or truncated:
            break
    return total, success


def train(env, minutes: float, iterations: int, seed: int, log):
    rng = np.random.default_rng(seed)
    mean, std = np.zeros(12), np.full(12, 0.5)
    started = time.monotonic()
    curve, deadline, iteration = [], started + 60.0 * minutes, 0
    while time.monotonic() < deadline and iteration < iterations:
        population = mean + std * rng.standard_normal((POPULATION, 12))
        results = [run_episode(env, theta) for theta in population]
        returns = np.array([r for r, _ in results])
        elite = population[np.argsort(returns)[-ELITES:]]
        mean, std = elite.mean(axis=0), elite.std(axis=0) + 0.05
        point = {"iteration": iteration, "episodes": (iteration + 1) * POPULATION,
                 "mean_return": float(returns.mean()), "best_return": float(returns.max()),
                 "population_success": float(np.mean([s for _, s in results])),
                 "minutes": (time.monotonic() - started) / 60.0}
        curve.append(point)
        log(json.dumps(point))
        iteration += 1
    final = [run_episode(env, mean) for _ in range(3)]
    return curve, float(np.mean([s for _, s in final])), mean


def make_env(reward: str, processes: list):
    from robo_reward_ros.simulation.metaworld_episodes import CornerCamera, make_env as metaworld_env
    env, _ = metaworld_env("reach-v3", 0)
    if reward == "env":
        return env, None
    from ament_index_python.packages import get_package_prefix
    from robo_reward_ros.client import RewardClient
    from robo_reward_ros.client.gym_env import RewardNodeEnv
    node = os.path.join(get_package_prefix("robo_reward_ros"), "lib", "robo_reward_ros", "reward_node")
    argv = [node, "--ros-args"] + [a for p in NODE_PARAMETERS for a in ("-p", p)]
    processes.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
    client = RewardClient()
    if not client.wait_for_node(180.0):
        raise RuntimeError("the reward node did not come up")
    camera = CornerCamera(env, 224)
    return RewardNodeEnv(env, client, render=camera.render, instructions=[INSTRUCTION],
                         step_timeout_sec=30.0), client


def plot(results: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 3.5), dpi=100)
    for reward, result in results.items():
        curve = result["curve"]
        ax.plot([p["episodes"] for p in curve], [p["population_success"] for p in curve],
                marker=".", label=f"trained on the {reward} reward "
                                  f"(final policy success {result['final_success']:.2f})")
    ax.set_xlabel("training episodes")
    ax.set_ylabel("success rate of the population\n(Meta-World's own success)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("CEM on Meta-World reach-v3: node reward (demo model) vs environment reward",
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reward", choices=("node", "env", "both"), default="both")
    parser.add_argument("--minutes", type=float, default=25.0,
                        help="training budget per reward source, in minutes")
    parser.add_argument("--iterations", type=int, default=16,
                        help=f"CEM iterations at most ({POPULATION} episodes each)")
    parser.add_argument("--out", default=os.path.expanduser("~/.cache/robo_reward_ros/rl-example"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.makedirs(args.out, exist_ok=True)
    results_path = os.path.join(args.out, "results.json")
    results = json.load(open(results_path)) if os.path.exists(results_path) else {}
    for reward in (("env", "node") if args.reward == "both" else (args.reward,)):
        processes, client = [], None
        started = time.monotonic()
        try:
            env, client = make_env(reward, processes)
            curve, final_success, theta = train(
                env, args.minutes, args.iterations, args.seed,
                lambda text: print(f"[{reward}] {text}", flush=True))
        finally:
            if client is not None:
                client.close()
            for process in processes:
                process.terminate()
                process.wait(30)
        results[reward] = {"curve": curve, "final_success": final_success,
                           "minutes": (time.monotonic() - started) / 60.0, "policy": theta.tolist()}
        with open(results_path, "w") as handle:
            json.dump(results, handle, indent=1)
    plot(results, os.path.join(args.out, "learning_curves.png"))
    for reward, result in results.items():
        print(f"{reward} reward: final policy success {result['final_success']:.2f} after "
              f"{result['curve'][-1]['episodes']} episodes ({result['minutes']:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
