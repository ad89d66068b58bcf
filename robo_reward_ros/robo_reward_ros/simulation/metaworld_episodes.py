# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Meta-World episodes rendered offscreen: scripted experts, fixed seeds, known outcomes.

Each scenario runs a Meta-World v3 environment (MuJoCo) with its scripted expert policy, changed
as the scenario says, and renders the ``corner`` camera every control step. One control step is
stamped ``STEP_SEC`` (0.1 s: a 10 Hz controller; Meta-World moves the hand by at most 1 cm per
step, so real-robot speeds of <= 0.1 m/s).

Ground truth per frame (see episode.py): the environment's own ``info["success"]`` and, as the
progress label, its shaped reward divided by its maximum (10), clipped to [0, 1]. The second
stage of the two-stage task (close the drawer that stage 1 opened) is labelled by the handle's
distance to its closed position: progress ``1 - distance / maxDist`` and success by
drawer-close-v3's own rule (``distance <= TARGET_RADIUS + 0.015``).

Outcomes: ``expert`` success; ``truncated`` (cut at a fraction of the expert's first-success step:
partial); ``noise`` (Gaussian action noise: failure from step 0); ``freeze`` (arm held still from
``onset``: failure, a stall); ``drop`` (gripper forced open from ``onset`` while carrying:
failure, a regression); ``two_stage`` (drawer-open expert until success, then drawer-close
expert on the same scene: success when both stages are done). Outcomes are checked against the
rendered truth when generated; a scenario whose truth disagrees raises instead of mislabelling.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import warnings
from typing import Callable, List, Optional, Sequence

import numpy as np

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.recordings.episode import Episode, FrameTruth

STEP_SEC = 0.1
CAMERA = "corner"


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    env: str
    instruction: str
    mode: str  # expert | truncated | noise | freeze | drop | two_stage | wander
    seed: int = 0
    onset: int = 0  # freeze / drop: first faulty step; wander: which draw of the arm's motion
    fraction: float = 0.7  # truncated: fraction of the expert's first-success step kept
    noise_sigma: float = 1.0
    second_instruction: str = ""  # two_stage


PICK_PLACE = "pick up the puck and place it at the goal"
SCENARIOS = (
    Scenario("reach_expert", "reach-v3", "reach the goal position", "expert"),
    Scenario("pick_place_expert", "pick-place-v3", PICK_PLACE, "expert"),
    Scenario("drawer_open_expert", "drawer-open-v3", "open the drawer", "expert"),
    Scenario("pick_place_truncated", "pick-place-v3", PICK_PLACE, "truncated", fraction=0.9),
    Scenario("pick_place_noisy", "pick-place-v3", PICK_PLACE, "noise", seed=3),
    Scenario("pick_place_frozen", "pick-place-v3", PICK_PLACE, "freeze", onset=41),
    Scenario("pick_place_dropped", "pick-place-v3", PICK_PLACE, "drop", onset=42),
    Scenario("drawer_open_then_close", "drawer-open-v3", "open the drawer", "two_stage",
             second_instruction="close the drawer"),
)
QUICK = ("pick_place_expert", "pick_place_dropped")  # a small set for tests


def scenario_by_name(name: str) -> Scenario:
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise KeyError(f"unknown scenario '{name}' (known: {', '.join(s.name for s in SCENARIOS)})")


def _offscreen_gl() -> None:
    # MuJoCo picks its GL backend when it is first imported, so this must run before any
    # `import mujoco` in the process: EGL renders headless (Mesa's software EGL works without a
    # GPU); a user's choice (osmesa, glfw) wins.
    os.environ.setdefault("MUJOCO_GL", "egl")


_offscreen_gl()


@functools.lru_cache(maxsize=None)
def _load_triton_before_mesa() -> None:
    """Load Triton's native library before Mesa's software GL, when both will be in the process.

    Mesa's llvmpipe (EGL, OSMesa) brings the system's LLVM; Triton's library carries its own.
    Loaded after a software GL context exists, Triton's segfaults (CUDA builds of torch import it
    when transformers loads a model: a process that renders, then scores or trains, died so on
    Python 3.10 with torch 2.13+cu130). Loaded first, both work. CPU-only torch has no Triton.
    """
    if os.environ.get("MUJOCO_GL") not in ("egl", "osmesa"):
        return
    import importlib.util
    if importlib.util.find_spec("triton") is None:
        return
    try:
        import triton._C.libtriton  # noqa: F401
    except ImportError:
        pass  # torch then finds no working Triton either, and does without


# Tasks whose shaped reward stays near 0 until the success step (drawer-close's multiplies in a
# grip the expert never closes; push-back's a grasp it never makes): their frames are labelled
# with the object's travel toward its target instead, from where it starts (0) to the distance at
# which Meta-World's evaluate_state calls success (1). As reward / 10, the expert's drawer-close
# frames were labelled <= 0.05 up to the success step, and the demo model learned to read the arm
# instead of the drawer (docs/rl-example.md).
TRAVEL_LABEL_SUCCESS_DISTANCE = {"drawer-close-v3": 0.05 + 0.015, "push-back-v3": 0.07}

# Experts whose class name does not follow the task's name.
POLICY_NAMES = {"peg-insert-side-v3": "SawyerPegInsertionSideV3Policy"}


def expert_policy(env_name: str):
    """Meta-World's scripted expert of a v3 task: ``pick-place-v3`` -> ``SawyerPickPlaceV3Policy``."""
    import metaworld.policies as policies
    if not env_name.endswith("-v3"):
        raise KeyError(f"{env_name}: only Meta-World v3 tasks have scripted experts here")
    name = POLICY_NAMES.get(env_name) or (
        "Sawyer" + "".join(part.capitalize() for part in env_name[:-3].split("-")) + "V3Policy")
    if not hasattr(policies, name):
        raise KeyError(f"{env_name}: Meta-World has no scripted expert {name}")
    return getattr(policies, name)()


@functools.lru_cache(maxsize=8)
def _benchmark(env_name: str, seed: int):
    # Building MT1 samples its 50 task variants (~10 s on a busy CPU); a scenario set makes the
    # same (task, seed) environment several times, and the benchmark is a pure function of both.
    import metaworld
    return metaworld.MT1(env_name, seed=seed)


def task_variants(env_name: str, seed: int) -> List:
    """Return the MT1 benchmark's scene variants of ``env_name`` at ``seed`` (``make_env`` sets the first)."""
    return list(_benchmark(env_name, seed).train_tasks)


def make_env(env_name: str, seed: int):
    benchmark = _benchmark(env_name, seed)
    env = benchmark.train_classes[env_name]()
    env.set_task(benchmark.train_tasks[0])
    obs, _ = env.reset(seed=seed)
    return env, obs


class CornerCamera:
    def __init__(self, env, size: int) -> None:
        import mujoco
        _load_triton_before_mesa()
        self._renderer = mujoco.Renderer(env.model, size, size)
        # No shadows or reflections: several times faster in software GL, same scene.
        self._renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
        self._renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = 0
        self._env = env

    def render(self) -> np.ndarray:
        self._renderer.update_scene(self._env.data, camera=CAMERA)
        # The corner camera renders upside down: flip rows and columns (a 180 degree turn).
        return np.ascontiguousarray(self._renderer.render()[::-1, ::-1])

    def close(self) -> None:
        self._renderer.close()


def offset_policy_action(theta: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Move the hand by a fixed linear map of its offset to the object, gripper still.

    The RL example's policy class (examples/rl_from_node_rewards.py): its untrained candidates
    sweep the arm about the object and now and then push it where the task wants it, the
    agent's own kind of failures and near-misses that experts never show a reward model.
    """
    weights, bias = theta[:9].reshape(3, 3), theta[9:]
    move = np.clip(weights @ (obs[4:7] - obs[:3]) * 10.0 + bias, -1.0, 1.0)
    return np.concatenate([move, [0.0]])


def wander_theta(scenario: Scenario) -> np.ndarray:
    """Draw the policy parameters of a wander scenario: its ``onset``-th draw at its seed, N(0, 0.5^2) as CEM starts."""
    return 0.5 * np.random.default_rng([scenario.seed, scenario.onset]).standard_normal(12)


def expert_success_step(scenario: Scenario, steps: int) -> Optional[int]:
    """Return the first step at which the unchanged expert succeeds in this scenario's scene (None: never).

    Scenarios that change the expert (a drop, a slow start) and the training set cut at it.
    """
    env, obs = make_env(scenario.env, scenario.seed)
    policy = expert_policy(scenario.env)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for step in range(steps):
                obs, _, _, _, info = env.step(np.asarray(policy.get_action(obs), dtype=float))
                if info["success"]:
                    return step
    finally:
        env.close()
    return None


def generate_episode(scenario: Scenario, steps: int = 100, size: int = 224,
                     seed_offset: int = 0, frame_every: int = 1) -> Episode:
    """Run and render one scenario; ``steps`` control steps at most.

    ``frame_every`` N: a frame every N-th control step (and the last): a 10/N Hz camera. Rendering
    is most of the cost, so N = 2 halves it for training sets whose clips sample frames anyway.
    """
    if seed_offset:
        scenario = dataclasses.replace(scenario, seed=scenario.seed + seed_offset,
                                       name=f"{scenario.name}_s{scenario.seed + seed_offset}")
    length = steps
    if scenario.mode == "truncated":
        first = expert_success_step(scenario, steps)
        if first is None:
            raise RuntimeError(f"{scenario.name}: the expert did not succeed in {steps} steps")
        length = max(2, int(first * scenario.fraction))
    env, obs = make_env(scenario.env, scenario.seed)
    policy = expert_policy(scenario.env)
    close_policy = expert_policy("drawer-close-v3") if scenario.mode == "two_stage" else None
    camera = CornerCamera(env, size)
    rng = np.random.default_rng(scenario.seed)
    theta = wander_theta(scenario) if scenario.mode == "wander" else None
    frames: List[Frame] = []
    truth: List[FrameTruth] = []
    stage, held_grip = 0, 0.0
    start_distance: Optional[float] = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the policies warn about clipped gains
            for step in range(length):
                active = close_policy if stage == 1 else policy
                action = (offset_policy_action(theta, obs) if theta is not None
                          else np.asarray(active.get_action(obs), dtype=float))
                if scenario.mode == "freeze" and step >= scenario.onset:
                    held_grip = action[3] if step == scenario.onset else held_grip
                    action = np.array([0.0, 0.0, 0.0, held_grip])  # arm still, grip kept
                elif scenario.mode == "drop" and step >= scenario.onset:
                    action[3] = -1.0  # gripper open: the puck falls
                elif scenario.mode == "noise":
                    action = np.clip(action + rng.normal(0.0, scenario.noise_sigma, 4), -1, 1)
                obs, reward, _, _, info = env.step(action)
                if stage == 0 and scenario.env in TRAVEL_LABEL_SUCCESS_DISTANCE:
                    start_distance = info["obj_to_target"] if start_distance is None else start_distance
                    row = FrameTruth(0, bool(info["success"]), travel_progress(
                        start_distance, info["obj_to_target"], TRAVEL_LABEL_SUCCESS_DISTANCE[scenario.env]))
                elif stage == 0:
                    row = FrameTruth(0, bool(info["success"]), _clip(reward / 10.0))
                else:
                    row = _closing_truth(env, obs)
                if step % frame_every == 0 or step == length - 1:
                    frames.append(Frame(stamp=round(step * STEP_SEC, 6), rgb=camera.render()))
                    truth.append(row)
                if scenario.mode == "two_stage" and stage == 0 and row.success:
                    stage = 1
    finally:
        camera.close()
        env.close()
    return _label(scenario, frames, truth, size)


def truncate_episode(expert: Episode, scenario: Scenario, first_success_step: int) -> Episode:
    """Cut the ``truncated`` scenario from its rendered expert episode: the same frames, unrendered.

    The expert is deterministic at a seed, so its first ``int(first * fraction)`` steps are exactly
    what rendering the truncated scenario would give.
    """
    length = max(2, int(first_success_step * scenario.fraction))
    keep = [i for i, frame in enumerate(expert.frames) if frame.stamp < length * STEP_SEC - 1e-9]
    if len(keep) < 2:
        keep = [0, 1]
    return _label(scenario, [expert.frames[i] for i in keep], [expert.truth[i] for i in keep],
                  int(expert.info.get("size", 0)))


def _closing_truth(env, obs) -> FrameTruth:
    from metaworld.envs.sawyer_drawer_close_v3 import SawyerDrawerCloseEnvV3
    closed = env._target_pos + np.array([0.0, env.maxDist, 0.0])
    distance = float(np.linalg.norm(obs[4:7] - closed))
    return FrameTruth(1, distance <= SawyerDrawerCloseEnvV3.TARGET_RADIUS + 0.015,
                      _clip(1.0 - distance / env.maxDist))


def travel_progress(start: float, distance: float, success_distance: float) -> float:
    """Return the share of the way from ``start`` to ``success_distance`` the object has come, in [0, 1]."""
    span = start - success_distance
    if span <= 0:  # it started where success is
        return 1.0
    return _clip((start - distance) / span)


def _clip(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def _label(scenario: Scenario, frames: List[Frame], truth: List[FrameTruth],
           size: int) -> Episode:
    stages = 2 if scenario.mode == "two_stage" else 1
    done = any(r.stage == stages - 1 and r.success for r in truth)
    expected = {"expert": "success", "two_stage": "success", "truncated": "partial"}.get(
        scenario.mode, "failure")
    outcome = "success" if done else ("partial" if scenario.mode == "truncated" else "failure")
    if scenario.mode == "wander":
        expected = outcome  # a wandering arm may or may not do the task: the rendered truth says which
    if outcome != expected:
        raise RuntimeError(f"{scenario.name}: expected {expected}, the rendered truth says "
                           f"{outcome}; change the scenario's seed or onset")
    kind = {"noise": "noise", "freeze": "stall", "drop": "drop", "wander": "wander"}.get(scenario.mode, "")
    kind = kind if outcome == "failure" else ""
    failure_step = (scenario.onset if scenario.mode in ("freeze", "drop") else 0) if kind else None
    instructions = [scenario.instruction] + ([scenario.second_instruction] if stages == 2 else [])
    return Episode(
        name=scenario.name, instructions=tuple(instructions), frames=frames, truth=truth,
        outcome=outcome, failure_kind=kind, failure_step=failure_step,
        task=scenario.env + ("+close" if stages == 2 else ""), source="metaworld",
        info={"env": scenario.env, "seed": scenario.seed, "mode": scenario.mode,
              "camera": CAMERA, "size": size, "step_sec": STEP_SEC})


def generate(names: Sequence[str] = (), steps: int = 100, size: int = 224,
             seeds: int = 1, progress: Optional[Callable[[str], None]] = None) -> List[Episode]:
    """Episodes of the named scenarios (all by default), ``seeds`` seed variants of each."""
    scenarios = [scenario_by_name(n) for n in names] if names else list(SCENARIOS)
    episodes = []
    for offset in range(seeds):
        for scenario in scenarios:
            if progress is not None:
                progress(scenario.name)
            episodes.append(generate_episode(scenario, steps, size, seed_offset=offset))
    return episodes
