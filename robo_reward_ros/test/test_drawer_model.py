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


def test_each_stage_is_what_its_robo_reward_finetune_command_would_run():
    """The stages were first run as these commands; the module must train exactly the same."""
    import dataclasses
    from robo_reward_ros.cli.finetune import build_parser, config_from_args
    from robo_reward_ros.training.drawer_model import stage_config
    command = ["--model", "base", "--episodes", "train", "wander/a", "--out", "stage-1", "--seed", "0",
               "--mode", "full", "--epochs", "2", "--steps-per-epoch", "300", "--batch-size", "8", "--lr", "1e-3",
               "--frame-stride", "1", "--counterfactual-fraction", "0.1", "--preference-fraction", "0.1"]

    def settings(config):  # an empty tuple and an empty list mean the same here
        return {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in dataclasses.asdict(config).items()}
    assert settings(stage_config("base", ["train", "wander/a"], "stage-1", 0)) == \
        settings(config_from_args(build_parser().parse_args(command)))


def test_the_model_counts_as_trained_only_once_its_last_stage_ran_all_its_steps(tmp_path):
    """The last stage writes a loadable checkpoint after its first epoch: an interrupted run is not a trained one."""
    import json
    from robo_reward_ros.training import drawer_model
    work = str(tmp_path)
    assert not drawer_model.is_trained(work)
    stage = tmp_path / "stage-2"
    stage.mkdir()
    (stage / "config.yaml").write_text("model: {}\n")
    for steps, trained in ((300, False), (600, True)):
        (stage / "training.json").write_text(json.dumps({"steps": steps}))
        assert drawer_model.is_trained(work) is trained
    assert drawer_model.final_model(work) == str(stage)
