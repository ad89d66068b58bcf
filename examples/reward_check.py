# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Before an agent trusts a reward model: does the node's reward order the agent's candidates as the task does?

    python examples/reward_check.py                                  # the demo model
    python examples/reward_check.py --model DIR --model DIR2 --candidates 64 --seed 0

The RL example's agent (examples/rl_from_node_rewards.py, CEM) keeps the best 3 of every 8
candidates by return, so it climbs only if the reward puts the candidates that close the drawer
among them. An arm takes an hour to show that; this takes minutes. It rolls out candidates drawn
as CEM's first iteration draws them, in the example's scene (``--seed``), and runs each episode
through the node's own reward loop offline (replay/offline_replay.py: the pipeline, task monitor
and parameters of the example's node arm, ``--reward-mode`` included; a step per frame, as the
lock-step controller gives), then prints per model:

- the rank correlation (Spearman) of the node's return with the environment's return;
- the node's success decisions: found (Meta-World's success came first) and false (it had not
  come yet, whether or not it came later: live, the node's decision ends the episode there), and
  the environment's successes the node never decided;
- elite precision: of the 3 best candidates of each group of 8 by the node's return, the share
  that succeeded in the environment, beside the share of all candidates that did (what a reward
  that knows nothing would give) and the same figure for the environment's own return.

Meta-World's ``info["success"]`` is the truth throughout, as in the example. ``--json FILE``
keeps every episode's figures.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import Dict, List, Optional, Sequence

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rl_from_node_rewards as example  # noqa: E402  (the agent, task and node parameters checked)

ELITES_OF = example.POPULATION
# Seconds between frames: what the lock-step example measured (its node's episode logs: about
# 0.05-0.06 s a step), so the monitor's time rules (stall window, low-progress grace) see an
# episode as long as the live one.
FRAME_SEC = 0.06


@dataclasses.dataclass
class Rollout:
    frames: list
    env_return: float
    success_step: Optional[int]  # first step Meta-World called success; None: never


def roll_out(candidates: int, seed: int, log=print) -> List[Rollout]:
    """The candidates CEM's first iteration would try (theta ~ N(0, 0.5^2)), in the scene of ``seed``."""
    from robo_reward_ros.core.frame import Frame
    from robo_reward_ros.simulation.metaworld_episodes import CornerCamera, make_env
    env, _ = make_env(example.TASK, seed)
    camera = CornerCamera(env, 224)
    rng = np.random.default_rng(seed)
    rollouts = []
    try:
        for _ in range(candidates):
            theta = 0.5 * rng.standard_normal(12)
            obs, _ = env.reset()
            frames, total, first = [Frame(0.0, camera.render())], 0.0, None
            for step in range(example.EPISODE_STEPS):
                obs, reward, _, _, info = env.step(example.policy_action(theta, obs))
                total += float(reward)
                if first is None and info["success"]:
                    first = step
                frames.append(Frame(FRAME_SEC * (step + 1), camera.render()))
            rollouts.append(Rollout(frames, total, first))
    finally:
        camera.close()
        env.close()
    log(f"{candidates} candidates rolled out in scene {seed}: "
        f"{sum(r.success_step is not None for r in rollouts)} closed the drawer")
    return rollouts


def node_values(model: str, reward_mode: str) -> Dict[str, object]:
    from robo_reward_ros.replay.offline_replay import node_parameter_values, parse_param
    overrides = dict(parse_param(p) for p in example.NODE_PARAMETERS + [f"reward.mode:={reward_mode}"])
    overrides.pop("model.preset", None)  # node_parameter_values has set the model itself
    return node_parameter_values(model, overrides=overrides)


def judge(model: str, rollouts: Sequence[Rollout], reward_mode: str) -> List[Dict[str, object]]:
    """Each rollout through the node's reward loop: its return and when (if ever) it decided success."""
    from robo_reward_ros.recordings.episode import Episode
    from robo_reward_ros.replay.offline_replay import OfflineReplay
    replay = OfflineReplay(node_values(model, reward_mode))
    rows = []
    try:
        for index, rollout in enumerate(rollouts):
            episode = Episode(f"candidate-{index}", (example.INSTRUCTION,), rollout.frames)
            trace = replay.replay(episode)
            decided = next((e.stamp for e in trace.events if e.type == "stage_succeeded"), None)
            rows.append({"node_return": float(sum(e.reward for e in trace.estimates)),
                         "env_return": rollout.env_return, "env_success_step": rollout.success_step,
                         "node_success_sec": decided})
    finally:
        replay.close()
    return rows


def elite_precision(scores: Sequence[float], successes: Sequence[bool]) -> float:
    """The share of successes among the ``ELITES`` best by ``scores`` of each group of ``ELITES_OF``."""
    hits = []
    for start in range(0, len(scores) - ELITES_OF + 1, ELITES_OF):
        group = np.arange(start, start + ELITES_OF)
        best = group[np.argsort(np.asarray(scores)[group], kind="stable")[-example.ELITES:]]
        hits += [successes[i] for i in best]
    return float(np.mean(hits))


def summary(rows: Sequence[Dict[str, object]]) -> Dict[str, object]:
    from scipy.stats import spearmanr
    success = [r["env_success_step"] is not None for r in rows]
    found = false = 0
    for row, ok in zip(rows, success):
        if row["node_success_sec"] is None:
            continue
        decided_step = int(round(row["node_success_sec"] / FRAME_SEC)) - 1
        if ok and row["env_success_step"] <= decided_step:
            found += 1
        else:
            false += 1
    node, env = [r["node_return"] for r in rows], [r["env_return"] for r in rows]
    ranked = np.std(node) > 0 and np.std(env) > 0  # a constant return orders nothing
    return {"spearman": float(spearmanr(node, env).statistic) if ranked else float("nan"),
            "found": found, "false": false,
            "missed": sum(ok and r["node_success_sec"] is None for r, ok in zip(rows, success)),
            "successes": sum(success), "elite_precision": elite_precision(node, success),
            "env_elite_precision": elite_precision(env, success), "base_rate": float(np.mean(success))}


def label(model: str) -> str:
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR
    return "the demo model" if os.path.realpath(model) == os.path.realpath(TRAINED_MODEL_DIR) else model


def table(results: Dict[str, Dict[str, object]]) -> List[str]:
    lines = ["| model | Spearman (node, env return) | successes found / false / missed | elite precision "
             "(node; env; any candidate) |", "|---|---|---|---|"]
    for model, s in results.items():
        lines.append(f"| {label(model)} | {s['spearman']:.2f} | {s['found']} / {s['false']} / {s['missed']} of "
                     f"{s['successes']} | {s['elite_precision']:.2f}; {s['env_elite_precision']:.2f}; "
                     f"{s['base_rate']:.2f} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", default=[],
                        help="a checkpoint to check (repeat for several); default: the demo model")
    parser.add_argument("--candidates", type=int, default=32,
                        help=f"episodes to roll out (a multiple of {ELITES_OF}: CEM's groups)")
    parser.add_argument("--seed", type=int, default=0, help="the scene variant and the candidates' draw")
    parser.add_argument("--reward-mode", choices=("delta", "progress", "potential"), default="delta")
    parser.add_argument("--json", default="", help="write every episode's figures here")
    args = parser.parse_args(argv)
    if args.candidates <= 0 or args.candidates % ELITES_OF:
        parser.error(f"--candidates: a positive multiple of {ELITES_OF}")
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR
    models = args.model or [TRAINED_MODEL_DIR]
    missing = [m for m in models if not os.path.isdir(m)]
    if missing:
        parser.error(f"--model: no such checkpoint directory: {', '.join(missing)}")
    os.environ.setdefault("MUJOCO_GL", "egl")
    rollouts = roll_out(args.candidates, args.seed)
    rows = {model: judge(model, rollouts, args.reward_mode) for model in models}
    results = {model: summary(r) for model, r in rows.items()}
    print("\n".join(table(results)))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"seed": args.seed, "reward_mode": args.reward_mode, "summary": results,
                       "episodes": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
