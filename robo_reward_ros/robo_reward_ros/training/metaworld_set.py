"""Meta-World episode sets for fine-tuning and for judging a fine-tuned model.

Several tasks, each with successes (scripted expert), partial episodes (the expert cut before its
first success) and failures (arm frozen part-way, Gaussian action noise, the puck dropped), at
chosen seeds, written as the same bags ``robo-reward sim-bags`` writes (evaluation/episode_bag.py):

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
from typing import Dict, List, Optional, Sequence

TRAIN_TASKS: Dict[str, str] = {
    "reach-v3": "reach the goal position",
    "push-v3": "push the puck to the goal",
    "pick-place-v3": "pick up the puck and place it at the goal",
    "drawer-open-v3": "open the drawer",
    "drawer-close-v3": "close the drawer",
    "button-press-topdown-v3": "press the button down from the top",
    "door-open-v3": "open the door",
    "window-open-v3": "open the window",
}
HELDOUT_TASKS: Dict[str, str] = {
    "window-close-v3": "close the window",
    "faucet-open-v3": "turn the faucet handle to open it",
    "plate-slide-v3": "slide the plate into the goal",
}
DEMO_HELDOUT = ("pick_place_expert", "pick_place_dropped", "drawer_open_then_close")


def task_scenarios(env: str, instruction: str, seed: int, steps: int = 100) -> List:
    """Success, partial and failure scenarios of one task at one seed."""
    from robo_reward_ros.evaluation.metaworld_episodes import Scenario, _expert_success_step
    short = env[:-3].replace("-", "_")
    expert = Scenario(f"{short}_expert_s{seed}", env, instruction, "expert", seed=seed)
    first = _expert_success_step(expert, steps)
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
                    log=print) -> List[str]:
    from robo_reward_ros.evaluation.episode_bag import write_episode_bag
    from robo_reward_ros.evaluation.metaworld_episodes import generate_episode
    paths = []
    for scenario in scenarios:
        path = os.path.join(out, scenario.name)
        skipped = path + ".skipped"  # why it was skipped: a rebuild does not render it again
        if os.path.isfile(os.path.join(path, "metadata.yaml")):
            paths.append(path)
            continue
        if os.path.isfile(skipped):
            continue
        stage_steps = steps * (2 if scenario.mode == "two_stage" else 1)
        try:
            episode = generate_episode(scenario, stage_steps, size)
        except RuntimeError as exc:
            log(f"skipped {scenario.name}: {exc}")
            os.makedirs(out, exist_ok=True)
            with open(skipped, "w") as handle:
                handle.write(f"{exc}\n")
            continue
        write_episode_bag(episode, path)
        log(f"{path}: {len(episode.frames)} frames, {episode.outcome}")
        paths.append(path)
    return paths


def build_sets(out: str, train_seeds: int = 2, heldout_task_seeds: int = 2, steps: int = 100,
               size: int = 224, log=print, only: Optional[Sequence[str]] = None) -> Dict[str, List[str]]:
    from robo_reward_ros.evaluation.metaworld_episodes import scenario_by_name
    sets: Dict[str, List] = {"train": [], "heldout-seeds": [], "heldout-tasks": []}
    for env, instruction in TRAIN_TASKS.items():
        for seed in range(1, train_seeds + 1):
            sets["train"] += task_scenarios(env, instruction, seed, steps)
        sets["heldout-seeds"] += task_scenarios(env, instruction, 0, steps)
    # The demo's own episodes (seed 0): the pick-place expert is already among the seed-0 ones.
    sets["heldout-seeds"] += [scenario_by_name(n) for n in DEMO_HELDOUT if n != "pick_place_expert"]
    for env, instruction in HELDOUT_TASKS.items():
        for seed in range(heldout_task_seeds):
            sets["heldout-tasks"] += task_scenarios(env, instruction, seed, steps)
    return {name: write_scenarios(scenarios, os.path.join(out, name), steps, size, log)
            for name, scenarios in sets.items() if only is None or name in only}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--train-seeds", type=int, default=2, help="seeds 1..N per training task (2)")
    parser.add_argument("--heldout-task-seeds", type=int, default=2, help="seeds per held-out task (2)")
    parser.add_argument("--steps", type=int, default=100, help="control steps (frames) per stage (100)")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--set", action="append", choices=("train", "heldout-seeds", "heldout-tasks"),
                        help="only these sets (repeatable; default all)")
    args = parser.parse_args(argv)
    sets = build_sets(args.out, args.train_seeds, args.heldout_task_seeds, args.steps, args.size,
                      only=args.set)
    for name, paths in sets.items():
        print(f"{name}: {len(paths)} bag(s) in {os.path.join(args.out, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
