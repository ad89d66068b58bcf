# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Meta-World episode sets for fine-tuning and for judging a fine-tuned model.

Several tasks, each with successes (scripted expert), partial episodes (the expert cut before its
first success) and failures (arm frozen part-way, Gaussian action noise, the puck dropped), at
chosen seeds, written as the same bags ``robo-reward sim-bags`` writes (recordings/episode_bag.py):

- ``train``: the training tasks at seeds 1..N;
- ``heldout-seeds``: the training tasks at seed 0, plus the demo's scenarios (``pick_place_expert``,
  ``pick_place_dropped``, ``drawer_open_then_close``, all seed 0): never trained on;
- ``heldout-tasks``: tasks the model never saw (instructions included), seeds 0 and 1.

    python -m robo_reward_ros.training.metaworld_set OUT [--train-seeds 2] [--steps 100]

Writes ``OUT/train``, ``OUT/heldout-seeds``, ``OUT/heldout-tasks``; an existing bag is kept.
A scenario whose rendered outcome disagrees with the intended one (noise that happened not to
break the task) is skipped with a note (``NAME.skipped``, so a rebuild skips it at once), never
mislabelled.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Dict, List, Optional, Sequence, Tuple

# An instruction for every Meta-World v3 task with a scripted expert.
TASK_INSTRUCTIONS: Dict[str, str] = {
    "assembly-v3": "put the ring on the peg",
    "basketball-v3": "put the ball into the hoop",
    "bin-picking-v3": "move the block from one bin to the other",
    "box-close-v3": "put the lid on the box",
    "button-press-topdown-v3": "press the button down from the top",
    "button-press-topdown-wall-v3": "press the button down from the top behind the wall",
    "button-press-v3": "press the button",
    "button-press-wall-v3": "press the button behind the wall",
    "coffee-button-v3": "press the button of the coffee machine",
    "coffee-pull-v3": "pull the mug away from the coffee machine",
    "coffee-push-v3": "push the mug under the coffee machine",
    "dial-turn-v3": "turn the dial",
    "disassemble-v3": "pick the ring off the peg",
    "door-close-v3": "close the door",
    "door-lock-v3": "lock the door",
    "door-open-v3": "open the door",
    "door-unlock-v3": "unlock the door",
    "drawer-close-v3": "close the drawer",
    "drawer-open-v3": "open the drawer",
    "faucet-close-v3": "turn the faucet handle to close it",
    "faucet-open-v3": "turn the faucet handle to open it",
    "hammer-v3": "hammer the nail into the wall",
    "hand-insert-v3": "insert the hand into the hole",
    "handle-press-side-v3": "press the handle down from the side",
    "handle-press-v3": "press the handle down",
    "handle-pull-side-v3": "pull the handle up from the side",
    "handle-pull-v3": "pull the handle up",
    "lever-pull-v3": "pull the lever up",
    "peg-insert-side-v3": "insert the peg into the hole from the side",
    "peg-unplug-side-v3": "unplug the peg from the side",
    "pick-out-of-hole-v3": "pick the puck out of the hole",
    "pick-place-v3": "pick up the puck and place it at the goal",
    "pick-place-wall-v3": "pick up the puck and place it at the goal behind the wall",
    "plate-slide-back-side-v3": "slide the plate back from the side into the goal",
    "plate-slide-back-v3": "slide the plate back into the goal",
    "plate-slide-side-v3": "slide the plate sideways into the goal",
    "plate-slide-v3": "slide the plate into the goal",
    "push-back-v3": "push the puck back to the goal",
    "push-v3": "push the puck to the goal",
    "push-wall-v3": "push the puck to the goal behind the wall",
    "reach-v3": "reach the goal position",
    "reach-wall-v3": "reach the goal position behind the wall",
    "shelf-place-v3": "place the puck on the shelf",
    "soccer-v3": "kick the ball into the goal",
    "stick-pull-v3": "pull the stick back to the goal",
    "stick-push-v3": "push the stick to the goal",
    "sweep-into-v3": "sweep the puck into the hole",
    "sweep-v3": "sweep the puck off the table",
    "window-close-v3": "close the window",
    "window-open-v3": "open the window",
}
# The project's test tasks: never trained on and never used to choose settings.
TEST_TASKS = ("button-press-v3", "door-close-v3", "handle-press-v3", "coffee-button-v3", "lever-pull-v3",
              "dial-turn-v3", "peg-insert-side-v3", "hammer-v3")
# Tasks held out of training to choose the recipe (steps, rates, fractions) by: the per-epoch eval.
VALIDATION_TASKS = ("faucet-open-v3", "plate-slide-v3", "sweep-into-v3")
TRAIN_TASKS: Dict[str, str] = {env: text for env, text in TASK_INSTRUCTIONS.items()
                               if env not in TEST_TASKS and env not in VALIDATION_TASKS}
# The first demo model's 8 tasks: their seed 0 is the held-out-seeds set, as before.
HELDOUT_SEED_TASKS = ("reach-v3", "push-v3", "pick-place-v3", "drawer-open-v3", "drawer-close-v3",
                      "button-press-topdown-v3", "door-open-v3", "window-open-v3")
SETS = ("train", "validation", "heldout-seeds", "test-tasks")
DEMO_HELDOUT = ("pick_place_expert", "pick_place_dropped", "drawer_open_then_close")


def task_scenarios(env: str, instruction: str, seed: int, steps: int = 100) -> List:
    """Success, partial and failure scenarios of one task at one seed."""
    from robo_reward_ros.simulation.metaworld_episodes import Scenario, expert_success_step
    short = env[:-3].replace("-", "_")
    expert = Scenario(f"{short}_expert_s{seed}", env, instruction, "expert", seed=seed)
    first = expert_success_step(expert, steps)
    if first is None:
        return []
    onset = max(3, int(first * (0.3 + 0.1 * (seed % 3))))
    return [
        expert,
        Scenario(f"{short}_truncated_s{seed}", env, instruction, "truncated", seed=seed,
                 fraction=0.5 + 0.15 * (seed % 3)),
        Scenario(f"{short}_frozen_s{seed}", env, instruction, "freeze", seed=seed, onset=onset),
        Scenario(f"{short}_noisy_s{seed}", env, instruction, "noise", seed=seed),
    ]


def write_scenarios(scenarios: Sequence, out: str, steps: int = 100, size: int = 224,
                    log=print, frame_every: int = 1) -> List[str]:
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    from robo_reward_ros.simulation.metaworld_episodes import (expert_success_step, generate_episode,
                                                               truncate_episode)
    paths = []
    experts: Dict = {}  # (env, seed) -> the expert episode rendered here: truncations are cut from it
    for scenario in scenarios:
        path = os.path.join(out, scenario.name)
        skipped = path + ".skipped"  # why it was skipped: a rebuild does not render it again
        if os.path.isfile(os.path.join(path, "metadata.yaml")):
            paths.append(path)
            continue
        if os.path.isfile(skipped):
            continue
        stage_steps = steps * (2 if scenario.mode == "two_stage" else 1)
        every = 1 if scenario.mode == "two_stage" else frame_every  # the demo's episode as the demo shows it
        expert = experts.get((scenario.env, scenario.seed))
        try:
            if scenario.mode == "truncated" and expert is not None:
                episode = truncate_episode(expert, scenario, expert_success_step(scenario, steps))
            else:
                episode = generate_episode(scenario, stage_steps, size, frame_every=every)
        except RuntimeError as exc:
            log(f"skipped {scenario.name}: {exc}")
            os.makedirs(out, exist_ok=True)
            with open(skipped, "w") as handle:
                handle.write(f"{exc}\n")
            continue
        if scenario.mode == "expert":
            experts = {(scenario.env, scenario.seed): episode}
        write_episode_bag(episode, path)
        log(f"{path}: {len(episode.frames)} frames, {episode.outcome}")
        paths.append(path)
    return paths


def set_tasks(name: str, train_seeds: int = 2, heldout_task_seeds: int = 2) -> List[Tuple[str, int]]:
    """(task, seed) pairs of one set (``SETS``); the test tasks appear only in ``test-tasks``."""
    if name == "train":
        return [(env, seed) for env in TRAIN_TASKS for seed in range(1, train_seeds + 1)]
    if name == "heldout-seeds":
        return [(env, 0) for env in HELDOUT_SEED_TASKS]
    tasks = {"validation": VALIDATION_TASKS, "test-tasks": TEST_TASKS}[name]
    return [(env, seed) for env in tasks for seed in range(heldout_task_seeds)]


def build_sets(out: str, train_seeds: int = 2, heldout_task_seeds: int = 2, steps: int = 100,
               size: int = 224, log=print, only: Optional[Sequence[str]] = None,
               frame_every: int = 1, shard: Tuple[int, int] = (0, 1)) -> Dict[str, List[str]]:
    """Render the sets into ``out/<set>``; ``shard`` (k, n): only every n-th task from the k-th (parallel builds)."""
    from robo_reward_ros.simulation.metaworld_episodes import scenario_by_name
    built = {}
    for name in SETS:
        if only is not None and name not in only:
            continue
        pairs = set_tasks(name, train_seeds, heldout_task_seeds)
        tasks = sorted({env for env, _ in pairs})
        mine = {env for i, env in enumerate(tasks) if i % shard[1] == shard[0]}
        scenarios = [s for env, seed in pairs if env in mine
                     for s in task_scenarios(env, TASK_INSTRUCTIONS[env], seed, steps)]
        if name == "heldout-seeds" and shard[0] == 0:
            # The demo's own episodes (seed 0): the pick-place expert is already among the seed-0 ones.
            scenarios += [scenario_by_name(n) for n in DEMO_HELDOUT if n != "pick_place_expert"]
        built[name] = write_scenarios(scenarios, os.path.join(out, name), steps, size, log, frame_every)
    return built


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--train-seeds", type=int, default=2, help="seeds 1..N per training task (2)")
    parser.add_argument("--heldout-task-seeds", type=int, default=2,
                        help="seeds per validation and test task (2)")
    parser.add_argument("--steps", type=int, default=100, help="control steps per stage (100)")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--frame-every", type=int, default=1,
                        help="a frame every N control steps (2: half the rendering; the demo's episodes stay at 1)")
    parser.add_argument("--shard", default="0/1", help="K/N: only every N-th task from the K-th (parallel builds)")
    parser.add_argument("--set", action="append", choices=SETS, help="only these sets (repeatable; default all)")
    args = parser.parse_args(argv)
    k, n = (int(v) for v in args.shard.split("/"))
    sets = build_sets(args.out, args.train_seeds, args.heldout_task_seeds, args.steps, args.size,
                      only=args.set, frame_every=args.frame_every, shard=(k, n))
    for name, paths in sets.items():
        print(f"{name}: {len(paths)} bag(s) in {os.path.join(args.out, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
