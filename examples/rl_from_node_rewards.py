# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""An agent that learns a Meta-World task from the reward node's rewards, with and without an operator in the loop.

    python examples/rl_from_node_rewards.py            # 3 arms x 2 seeds; prints the table

Three arms, the same agent, seeds and budget; success is Meta-World's own ``info["success"]``,
which no arm trains on:

- ``env``:  the environment's shaped reward (the ceiling);
- ``node``: the reward node's reward (``RewardNodeEnv``), the model fixed (the demo model, or
  ``--model DIR``: a checkpoint of your own, the loop's fine-tunes start from it too);
- ``loop``: the node's reward with the operator loop. The node runs in confirmation mode; on one
  episode in ``--watch-every`` a scripted operator (Meta-World's success flag standing in for a
  person) confirms or vetoes the node's pending success, says success when it sees one the node
  missed, and failure at the end of an episode that did not succeed, all through the node's
  operator services (``RewardClient.submit_verdict``). On the other episodes a pending decision
  applies after ``operator.confirm_timeout_sec``. The frames the agent sent are recorded
  (``CameraRecorder``: what ``ros2 bag record`` would keep), and every ``--finetune-every``
  episodes ``robo-reward finetune --episode-logs`` trains on all rollouts so far, labelled by the
  operator's corrections in the node's episode logs (confirmed successes, vetoes as hard
  negatives, failures as the worse clip of preference pairs), plus ``--demos`` demonstrations of
  the task (the scripted expert, whole and cut short, at scenes the agent never sees), as
  HIL-SERL starts from a person's demonstrations: they anchor what progress looks like while the
  agent's own successes are still rare. The node loads the new checkpoint through its lifecycle
  (``RewardClient.reload_model``), without a restart.

The agent is the cross-entropy method over a linear policy, a = clip(W (handle - hand) + b),
12 parameters: one that learns the task on 2 CPU cores in minutes from the environment's reward.
The task is drawer-close-v3: the drawer is the largest moving thing in the corner camera's view,
so whether it is open or closed can be read from one frame (reach's goal, a 6 px sphere in the air,
cannot), and it is one of the demo model's training tasks. Results (curves, table, per-seed JSON)
go to ``--out``; an arm and seed already there is not run again (``--fresh`` reruns).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional

import numpy as np
from robo_reward_ros.simulation.metaworld_episodes import offset_policy_action as policy_action

TASK = "drawer-close-v3"
INSTRUCTION = "close the drawer"
EPISODE_STEPS = 50
POPULATION, ELITES = 8, 3
EVAL_VARIANTS = 10  # the final policy is judged on this many of the task's scene variants
ARMS = ("env", "node", "loop")
ARM_TITLES = {"env": "environment reward (ceiling)", "node": "node reward, model fixed",
              "loop": "node reward + operator loop + fine-tuning"}
NODE_PARAMETERS = ['model.preset:=""', "model.backend:=robometer", "model.device:=cpu",
                   "inference.rate_hz:=20.0", "failure.stall_window_sec:=4.0",
                   "failure.low_progress_grace_sec:=5.0"]
LOOP_PARAMETERS = ["operator.confirm_decisions:=true", "operator.confirm_timeout_sec:=0.3",
                   "operator.confirm_timeout_action:=apply"]
OPERATOR = "scripted-operator"
DEMO_MODEL = "the demo model"  # --model's default, as results name it
DRAWER_MODEL = "drawer"  # --model drawer: training/drawer_model.py's model, trained on first use
DEMO_SEEDS_FROM = 100  # demonstrations' scenes: MT1 seeds no arm trains or is judged on


@dataclasses.dataclass
class Episode:
    total: float
    success: bool
    labels: int = 0  # operator inputs given in it


class ScriptedOperator:
    """Watches one episode in ``every``; Meta-World's success flag is what the person sees."""

    def __init__(self, client, every: int) -> None:
        from robo_reward_msgs.msg import TaskState
        self.client, self.every, self.pending = client, every, TaskState.STATUS_PENDING
        self.episodes = 0
        self.counts: Dict[str, int] = {"success": 0, "not_yet": 0, "failure": 0}

    def watching(self) -> bool:
        self.episodes += 1
        return (self.episodes - 1) % self.every == 0

    def say(self, verdict: str, reason: str, episode_id: str) -> int:
        from robo_reward_ros.client.reward_client import RewardNodeError
        try:
            self.client.submit_verdict(verdict, OPERATOR, reason, episode_id=episode_id)
        except RewardNodeError as exc:  # the episode ended in between: nothing to judge
            print(f"  operator: {verdict} refused: {exc}", flush=True)
            return 0
        self.counts[verdict] += 1
        return 1


def run_episode(env, theta: np.ndarray, operator: Optional[ScriptedOperator] = None) -> Episode:
    """One episode; NaN rewards (a node step that did not come) count as 0."""
    obs, info = env.reset()
    watched = operator is not None and operator.watching()
    episode_id = info.get("episode_id", "")
    episode = Episode(0.0, False)
    ended_by_node = False
    for _ in range(EPISODE_STEPS):
        obs, reward, terminated, truncated, info = env.step(policy_action(theta, obs))
        episode.total += 0.0 if math.isnan(reward) else float(reward)
        episode.success = episode.success or bool(info.get("success", 0.0))
        if watched and not terminated:
            if info.get("status") == operator.pending:
                verdict = "success" if episode.success else "not_yet"
                episode.labels += operator.say(verdict, "drawer closed" if episode.success else
                                               "the drawer is still open", episode_id)
            elif info.get("success"):
                episode.labels += operator.say("success", "drawer closed (the node missed it)", episode_id)
        if terminated or truncated:
            ended_by_node = terminated
            break
    if watched and not ended_by_node and not episode.success:
        episode.labels += operator.say("failure", "the drawer is still open at the end", episode_id)
    return episode


@dataclasses.dataclass
class Arm:
    name: str
    env: object
    client: object = None
    process: Optional[subprocess.Popen] = None
    operator: Optional[ScriptedOperator] = None
    finetune: Optional[Callable[[int], None]] = None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.process is not None:
            self.process.terminate()
            self.process.wait(60)


def train(arm: Arm, episodes: int, seed: int, finetune_every: int, log) -> dict:
    rng = np.random.default_rng(seed)
    mean, std = np.zeros(12), np.full(12, 0.5)
    started, curve, labels, done = time.monotonic(), [], 0, 0
    while done < episodes:
        population = mean + std * rng.standard_normal((POPULATION, 12))
        results = [run_episode(arm.env, theta, arm.operator) for theta in population]
        done += POPULATION
        labels += sum(r.labels for r in results)
        returns = np.array([r.total for r in results])
        elite = population[np.argsort(returns)[-ELITES:]]
        mean, std = elite.mean(axis=0), elite.std(axis=0) + 0.05
        point = {"episodes": done, "mean_return": float(returns.mean()),
                 "population_success": float(np.mean([r.success for r in results])),
                 "operator_labels": labels, "minutes": (time.monotonic() - started) / 60.0}
        curve.append(point)
        log(json.dumps(point))
        if arm.finetune is not None and done % finetune_every == 0 and done < episodes:
            arm.finetune(done)
    return {"curve": curve, "policy": mean.tolist(), "operator_labels": labels,
            "minutes": (time.monotonic() - started) / 60.0}


def final_success(theta: np.ndarray, seed: int) -> float:
    """Judge the final policy on ``EVAL_VARIANTS`` scene variants of the task (environment only)."""
    from robo_reward_ros.simulation.metaworld_episodes import make_env, task_variants
    env, _ = make_env(TASK, seed)
    variants = task_variants(TASK, seed)[:EVAL_VARIANTS]
    successes = []
    for variant in variants:
        env.set_task(variant)
        successes.append(run_episode(env, theta).success)
    return float(np.mean(successes))


def start_node(out: str, loop: bool, reward_mode: str, model: str = ""):
    from ament_index_python.packages import get_package_prefix
    from robo_reward_ros.client import RewardClient
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR
    model = model or TRAINED_MODEL_DIR
    executable = os.path.join(get_package_prefix("robo_reward_ros"), "lib", "robo_reward_ros", "reward_node")
    logs = os.path.join(out, "episode-logs") if loop else ""
    parameters = NODE_PARAMETERS + [f"model.id:={model}", f'episode_log.directory:="{logs}"',
                                    f"reward.mode:={reward_mode}"]
    parameters += LOOP_PARAMETERS if loop else []
    # A namespace of this run's own: two runs on one machine (one per arm or seed) would otherwise
    # each talk to both nodes, named /reward_node alike (seen: "no reward node answers").
    namespace = f"/rl_example_{os.getpid()}"
    argv = [executable, "--ros-args", "-r", f"__ns:={namespace}"] + [a for p in parameters for a in ("-p", p)]
    with open(os.path.join(out, "node.log"), "ab") as node_log:
        process = subprocess.Popen(argv, stdout=node_log, stderr=subprocess.STDOUT)
    client = RewardClient(namespace=namespace)
    if not client.wait_for_node(300.0):
        process.terminate()
        raise RuntimeError(f"the reward node did not come up: see {out}/node.log")
    return process, client, model


def demonstrations(out: str, count: int) -> str:
    """Render ``count`` expert demonstrations (and each cut short: partial progress) once; return their folder."""
    from robo_reward_ros.training.metaworld_set import task_scenarios, write_scenarios
    folder = os.path.join(out, "demos")
    scenarios = [s for seed in range(DEMO_SEEDS_FROM, DEMO_SEEDS_FROM + count)
                 for s in task_scenarios(TASK, INSTRUCTION, seed) if s.mode in ("expert", "truncated")]
    write_scenarios(scenarios, folder, log=lambda text: print(f"  demonstration {text}", flush=True))
    return folder


def make_arm(name: str, seed: int, out: str, args) -> Arm:
    from robo_reward_ros.simulation.metaworld_episodes import CornerCamera, make_env
    env, _ = make_env(TASK, seed)
    if name == "env":
        return Arm(name, env)
    from robo_reward_ros.client.gym_env import RewardNodeEnv
    from robo_reward_ros.recordings.camera_recorder import CameraRecorder
    demos = demonstrations(os.path.dirname(os.path.dirname(out)), args.demos) if name == "loop" else ""
    process, client, model = start_node(out, loop=name == "loop", reward_mode=args.reward_mode,
                                        model=model_path(args.model))
    camera = CornerCamera(env, 224)
    arm = Arm(name, None, client, process)
    recording = {"recorder": None, "round": 0, "model": model}

    def record(stamp: float, rgb: np.ndarray) -> None:
        if recording["recorder"] is None:
            path = os.path.join(out, "rollouts", f"round-{recording['round']}")
            recording["recorder"] = CameraRecorder(path)
        recording["recorder"].write(stamp, rgb)

    def finetune(episodes_done: int) -> None:
        recording["recorder"].close()
        recording["recorder"] = None
        recording["round"] += 1
        checkpoint = os.path.join(out, f"model-after-{episodes_done}")
        command = [sys.executable, "-m", "robo_reward_ros.cli.main", "finetune",
                   "--model", recording["model"], "--episodes", os.path.join(out, "rollouts"), demos,
                   "--episode-logs", os.path.join(out, "episode-logs"), "--out", checkpoint,
                   "--mode", args.finetune_mode, "--epochs", "1", "--steps-per-epoch", str(args.finetune_steps),
                   "--batch-size", "8", "--device", "cpu", "--save-dtype", "fp32", "--skip-unusable",
                   "--no-resume", "--quiet", "--seed", str(seed)]
        started = time.monotonic()
        with open(os.path.join(out, "finetune.log"), "a") as finetune_log:
            finetune_log.write(f"\n$ {' '.join(command)}\n")
            finetune_log.flush()
            done = subprocess.run(command, stdout=finetune_log, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            print(f"  finetune after {episodes_done} episodes failed (see {out}/finetune.log); "
                  "the node keeps its model", flush=True)
            return
        client.reload_model(checkpoint)
        recording["model"] = checkpoint
        print(f"  fine-tuned on the rollouts so far in {time.monotonic() - started:.0f} s; "
              f"the node now scores with {checkpoint}", flush=True)

    sink = record if name == "loop" else None
    arm.env = RewardNodeEnv(env, client, render=camera.render, instructions=[INSTRUCTION],
                            step_timeout_sec=30.0, frame_sink=sink)
    if name == "loop":
        arm.operator = ScriptedOperator(client, args.watch_every)
        arm.finetune = finetune
    return arm


def arm_settings(name: str, args) -> Dict[str, object]:
    """What shapes an arm's result beside the seed: a table compares runs of one configuration."""
    if name == "env":
        return {}
    settings: Dict[str, object] = {"reward_mode": args.reward_mode,
                                   "model": model_name(args.model)}
    if name == "loop":
        settings.update(watch_every=args.watch_every, demos=args.demos, finetune_mode=args.finetune_mode,
                        finetune_steps=args.finetune_steps,
                        # Every N episodes, and none when N reaches the budget: the model stays fixed.
                        finetune_every=args.finetune_every if args.finetune_every < args.episodes else None)
    return settings


def stored_settings(result: dict, name: str) -> Dict[str, object]:
    """A stored run's settings; a run from before they were kept gives its reward mode only."""
    settings = dict(result["settings"]) if "settings" in result else (
        {} if name == "env" else {"reward_mode": result.get("reward_mode", "delta")})
    if name != "env":
        settings.setdefault("model", DEMO_MODEL)  # runs from before --model used the demo model
    return settings


def arm_settings_of(runs: Dict[int, dict], name: str) -> Dict[str, object]:
    """The settings of an arm's runs: those of a run that kept them all, where there is one."""
    kept = [runs[s] for s in sorted(runs) if "settings" in runs[s]]
    return stored_settings(kept[0] if kept else runs[min(runs)], name)


def arm_title(name: str, settings: Dict[str, object]) -> str:
    if name == "loop" and "finetune_every" in settings and settings["finetune_every"] is None:
        return "node reward + operator loop, model fixed"
    return ARM_TITLES[name]


def settings_text(name: str, settings: Dict[str, object]) -> str:
    model = "" if settings.get("model", DEMO_MODEL) == DEMO_MODEL else f"model {settings['model']}; "
    if name != "loop" or "watch_every" not in settings:  # a loop run from before its settings were kept
        return f"{name}: {model}reward mode {settings['reward_mode']}" if settings else ""
    tuning = ("the model fixed (no fine-tuning)" if settings["finetune_every"] is None else
              f"fine-tuning every {settings['finetune_every']} episodes, {settings['finetune_steps']} steps "
              f"({settings['finetune_mode']}), with {settings['demos']} demonstrations")
    return (f"loop: {model}reward mode {settings['reward_mode']}; the operator watches 1 episode in "
            f"{settings['watch_every']}; {tuning}")


def model_path(model: str) -> str:
    """Return the checkpoint directory ``--model`` names ("": the demo model, filled in by start_node)."""
    if model == DRAWER_MODEL:
        from robo_reward_ros.training import drawer_model
        return drawer_model.final_model(drawer_model.default_work())
    return model


def model_name(model: str) -> str:
    """Return how results name ``--model``: a path, or the demo or drawer model by name."""
    if model == DRAWER_MODEL:
        return "the drawer-close model (training/drawer_model.py)"
    return os.path.abspath(model) if model else DEMO_MODEL


def run_arm(name: str, seed: int, out: str, args) -> dict:
    out = os.path.join(out, name, f"seed-{seed}")
    if os.path.isdir(out):
        shutil.rmtree(out)  # a run cut short leaves rollouts and logs a new run must not mix in
    os.makedirs(out)
    arm = make_arm(name, seed, out, args)
    try:
        result = train(arm, args.episodes, seed, args.finetune_every,
                       lambda text: print(f"[{name} seed {seed}] {text}", flush=True))
    finally:
        arm.close()
    result["final_success"] = final_success(np.array(result["policy"]), seed)
    result["settings"] = arm_settings(name, args)
    if arm.operator is not None:
        result["operator_counts"] = arm.operator.counts
    with open(os.path.join(out, "result.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    return result


def episodes_to(curve: List[dict], level: float) -> Optional[int]:
    return next((p["episodes"] for p in curve if p["population_success"] >= level), None)


def table(results: Dict[str, Dict[int, dict]]) -> List[str]:
    lines = ["| arm | seeds | final success, mean (per seed) | episodes to 50 % population success "
             "| operator labels | wall-clock min per seed |", "|---|---|---|---|---|---|"]
    notes = []
    for name in ARMS:
        runs = results.get(name)
        if not runs:
            continue
        settings = arm_settings_of(runs, name)
        notes.append(settings_text(name, settings))
        finals = [runs[s]["final_success"] for s in sorted(runs)]
        reach = [episodes_to(runs[s]["curve"], 0.5) for s in sorted(runs)]
        lines.append(
            f"| {arm_title(name, settings)} | {len(runs)} "
            f"| {np.mean(finals):.2f} ({', '.join(f'{f:.2f}' for f in finals)}) "
            f"| {', '.join('never' if r is None else str(r) for r in reach)} "
            f"| {sum(runs[s]['operator_labels'] for s in runs)} "
            f"| {np.mean([runs[s]['minutes'] for s in runs]):.1f} |")
    notes = [n for n in notes if n]
    return lines + ([""] + notes if notes else [])


def plot(results: Dict[str, Dict[int, dict]], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 3.8), dpi=100)
    for name in ARMS:
        runs = results.get(name)
        if not runs:
            continue
        curves = [runs[s]["curve"] for s in sorted(runs)]
        length = min(len(c) for c in curves)
        x = [p["episodes"] for p in curves[0][:length]]
        y = np.array([[p["population_success"] for p in c[:length]] for c in curves])
        finals = np.mean([runs[s]["final_success"] for s in runs])
        title = arm_title(name, arm_settings_of(runs, name))
        line, = ax.plot(x, y.mean(axis=0), marker=".", label=f"{title} (final {finals:.2f})")
        ax.fill_between(x, y.min(axis=0), y.max(axis=0), color=line.get_color(), alpha=0.15)
    ax.set_xlabel("training episodes")
    ax.set_ylabel("population success\n(Meta-World's own flag)")
    ax.set_ylim(-0.05, 1.05)
    seeds = max(len(r) for r in results.values())
    ax.set_title(f"CEM on Meta-World {TASK}: mean of {seeds} seed(s), band: min to max", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    fig.savefig(path)


def load_results(out: str) -> Dict[str, Dict[int, dict]]:
    results: Dict[str, Dict[int, dict]] = {}
    for name in ARMS:
        folder = os.path.join(out, name)
        for entry in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            path = os.path.join(folder, entry, "result.json")
            if entry.startswith("seed-") and os.path.isfile(path):
                with open(path) as handle:
                    results.setdefault(name, {})[int(entry[5:])] = json.load(handle)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated: env, node, loop")
    parser.add_argument("--seeds", type=int, default=2, help="seeds 0..N-1 (scene variant and agent)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds from this one (several machines)")
    parser.add_argument("--episodes", type=int, default=96, help=f"training episodes per arm and seed "
                                                                 f"(a multiple of {POPULATION})")
    parser.add_argument("--watch-every", type=int, default=4, help="loop: the operator watches 1 episode in N")
    parser.add_argument("--finetune-every", type=int, default=16, help="loop: fine-tune every N episodes")
    parser.add_argument("--finetune-steps", type=int, default=60, help="loop: training steps per fine-tune")
    parser.add_argument("--finetune-mode", choices=("heads", "full"), default="full")
    parser.add_argument("--demos", type=int, default=4, help="loop: expert demonstrations to fine-tune with")
    parser.add_argument("--model", default="",
                        help="node and loop arms: the reward model's checkpoint directory, or 'drawer': the "
                        "drawer-close model of training/drawer_model.py, trained on first use "
                        "(default: the demo model)")
    parser.add_argument("--reward-mode", choices=("delta", "progress", "potential"), default="delta",
                        help="node arms: the node's dense reward (reward.mode); a separate --out per mode")
    parser.add_argument("--out", default=os.path.expanduser("~/.cache/robo_reward_ros/rl-example"))
    parser.add_argument("--fresh", action="store_true", help="rerun arms and seeds already in --out")
    args = parser.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = sorted(set(arms) - set(ARMS))
    if unknown or args.episodes % POPULATION or args.episodes <= 0:
        parser.error(f"unknown arm(s) {unknown}" if unknown else f"--episodes: a positive multiple of {POPULATION}")
    if args.model and args.model != DRAWER_MODEL and not os.path.isdir(args.model):
        parser.error(f"--model: no such checkpoint directory: {args.model}")
    from robo_reward_ros.training import drawer_model
    if args.model == DRAWER_MODEL and {"node", "loop"} & set(arms) and not drawer_model.is_trained(
            drawer_model.default_work()):
        print(f"training the drawer-close model in {drawer_model.default_work()} (once; about 35 min on 2 "
              "cores): python -m robo_reward_ros.training.drawer_model", flush=True)
        drawer_model.train(drawer_model.default_work(), drawer_model.default_base())
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.makedirs(args.out, exist_ok=True)
    for name in arms:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            stored = os.path.join(args.out, name, f"seed-{seed}", "result.json")
            if not args.fresh and os.path.isfile(stored):
                with open(stored) as handle:
                    kept = stored_settings(json.load(handle), name)
                wanted = arm_settings(name, args)
                differ = [f"--{key.replace('_', '-')} {'(none: model fixed)' if kept[key] is None else kept[key]}"
                          for key in sorted(kept)
                          if key in wanted and kept[key] != wanted[key]]
                if differ:
                    parser.error(f"{stored} was run with {', '.join(differ)}: one table holds one "
                                 "configuration (another --out, or --fresh)")
                print(f"[{name} seed {seed}] already in {args.out} (--fresh reruns it)")
                continue
            result = run_arm(name, seed, args.out, args)
            print(f"[{name} seed {seed}] final policy success {result['final_success']:.2f} on "
                  f"{EVAL_VARIANTS} scene variants ({result['minutes']:.1f} min)", flush=True)
    results = {name: runs for name, runs in load_results(args.out).items() if name in arms}
    plot(results, os.path.join(args.out, "learning_curves.png"))
    lines = table(results)
    with open(os.path.join(args.out, "table.md"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"curves: {os.path.join(args.out, 'learning_curves.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
