# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The RL example's drawer-close model recipe: its wander scenes, its first stage's share, its finetune flags."""


def test_the_wander_scenes_are_apart_from_the_example_s_and_the_first_stage_takes_the_first_eight():
    from robo_reward_ros.training import drawer_model
    scenarios = drawer_model.wander_scenarios(drawer_model.WANDER_SEEDS)
    assert len(scenarios) == 32 * 4 and {s.mode for s in scenarios} == {"wander"}
    assert min(s.seed for s in scenarios) >= 10  # the example's arms train and are judged at seeds 0..3
    assert len({(s.seed, s.onset) for s in scenarios}) == len(scenarios)
    paths = [f"/bags/wander/{s.name}" for s in reversed(scenarios)]
    first = drawer_model.first_stage_wander(paths)
    assert len(first) == 8 * 4 and first == sorted(first)
    assert {int(p.rsplit("_s", 1)[1]) for p in first} == set(range(10, 18))


def test_each_stage_s_settings_are_ones_robo_reward_finetune_accepts():
    from robo_reward_ros.cli.finetune import build_parser
    from robo_reward_ros.training.drawer_model import STAGE_ARGS
    args = build_parser().parse_args(["--model", "m", "--episodes", "e", "--out", "o", *STAGE_ARGS])
    assert (args.mode, args.epochs, args.steps_per_epoch, args.batch_size, args.lr) == ("full", 2, 300, 8, 1e-3)
    assert (args.counterfactual_fraction, args.preference_fraction, args.frame_stride) == (0.1, 0.1, 1)
