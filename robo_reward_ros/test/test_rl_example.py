# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""examples/rl_from_node_rewards.py as a user runs it: its environment arm end to end, and its argument checks.

examples/reward_check.py, the minutes-long check of a reward model against the same agent, likewise.

The node arms run the reward node for an hour (docs/rl-example.md has their figures); their parts
are tested where they live: RewardNodeEnv (test_gym_env.py), RewardClient.reload_model
(test_reward_node_lifecycle.py), CameraRecorder (test_camera_recorder.py), finetune --episode-logs
(test_finetune_operator_labels.py).
"""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("metaworld", reason="metaworld is not installed")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "rl_from_node_rewards.py")


def run(*args, env=None):
    return subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True, timeout=600,
                          env=None if env is None else {**os.environ, **env})


def test_the_environment_arm_trains_judges_and_prints_the_table(tmp_path):
    out = tmp_path / "rl"
    done = run("--arms", "env", "--seeds", "1", "--episodes", "16", "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((out / "env" / "seed-0" / "result.json").read_text())
    assert [p["episodes"] for p in result["curve"]] == [8, 16]
    assert 0.0 <= result["final_success"] <= 1.0 and len(result["policy"]) == 12
    row = next(line for line in done.stdout.splitlines() if line.startswith("| environment reward"))
    assert f"| 1 | {result['final_success']:.2f} (" in row
    assert (out / "learning_curves.png").stat().st_size > 10_000
    assert (out / "table.md").read_text().splitlines()[2] == row
    again = run("--arms", "env", "--seeds", "1", "--episodes", "16", "--out", str(out))
    assert "already in" in again.stdout and row in again.stdout  # kept, not run again


@pytest.mark.parametrize("args, message", [(("--arms", "env,bandit"), "unknown arm(s) ['bandit']"),
                                           (("--episodes", "12"), "a positive multiple of 8")])
def test_bad_arguments_are_refused_with_the_reason(args, message, tmp_path):
    done = run(*args, "--out", str(tmp_path))
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_stored_run_of_another_reward_mode_is_not_mixed_into_the_table(tmp_path):
    stored = tmp_path / "loop" / "seed-0"
    stored.mkdir(parents=True)
    (stored / "result.json").write_text(json.dumps({"reward_mode": "progress", "curve": [], "policy": []}))
    done = run("--arms", "loop", "--seeds", "1", "--out", str(tmp_path))  # the default mode: delta
    assert done.returncode == 2, done.stdout + done.stderr
    assert "was run with --reward-mode progress: one table holds one configuration" in done.stderr


LOOP_SETTINGS = {"reward_mode": "delta", "watch_every": 2, "demos": 4, "finetune_mode": "full",
                 "finetune_steps": 60, "finetune_every": None}


def stored_loop_run(folder, settings):
    folder.mkdir(parents=True)
    curve = [{"episodes": 8 * (i + 1), "population_success": 0.5, "mean_return": 1.0, "operator_labels": 3 * i,
              "minutes": 0.1 * i} for i in range(12)]
    result = {"reward_mode": "delta", "curve": curve, "policy": [0.0] * 12,
              "operator_labels": 33, "minutes": 1.2, "final_success": 0.7}
    if settings is not None:  # None: a run from before the settings were kept
        result["settings"] = settings
    (folder / "result.json").write_text(json.dumps(result))


def test_a_stored_loop_run_of_other_operator_or_finetune_settings_is_refused(tmp_path):
    stored_loop_run(tmp_path / "loop" / "seed-0", LOOP_SETTINGS)
    done = run("--arms", "loop", "--seeds", "1", "--out", str(tmp_path))  # the defaults: 1 in 4, every 16
    assert done.returncode == 2, done.stdout + done.stderr
    assert "was run with --finetune-every (none: model fixed), --watch-every 2: one table holds one configuration" \
        in done.stderr


def test_a_loop_run_without_finetuning_is_titled_as_such_and_its_settings_printed(tmp_path):
    stored_loop_run(tmp_path / "loop" / "seed-0", None)
    stored_loop_run(tmp_path / "loop" / "seed-1", LOOP_SETTINGS)
    done = run("--arms", "loop", "--seeds", "2", "--watch-every", "2", "--finetune-every", "96",
               "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("already in") == 2
    assert "| node reward + operator loop, model fixed | 2 | 0.70 (0.70, 0.70) | 8, 8 | 66 | 1.2 |" in done.stdout
    note = "loop: reward mode delta; the operator watches 1 episode in 2; the model fixed (no fine-tuning)"
    assert note in done.stdout and note in (tmp_path / "table.md").read_text()


def test_a_stored_run_of_another_model_is_refused_and_the_model_named_in_its_settings(tmp_path):
    own = tmp_path / "my-model"
    own.mkdir()
    stored_loop_run(tmp_path / "loop" / "seed-0", dict(LOOP_SETTINGS, model=str(own)))
    done = run("--arms", "loop", "--seeds", "1", "--watch-every", "2", "--finetune-every", "96",
               "--out", str(tmp_path))  # the demo model
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"was run with --model {own}: one table holds one configuration" in done.stderr
    done = run("--arms", "loop", "--seeds", "1", "--watch-every", "2", "--finetune-every", "96",
               "--model", str(own), "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"loop: model {own}; reward mode delta; the operator watches 1 episode in 2" in done.stdout
    done = run("--model", str(tmp_path / "none"), "--out", str(tmp_path))
    assert done.returncode == 2 and "--model: no such checkpoint directory" in done.stderr, done.stderr


def test_model_drawer_names_the_drawer_close_model_and_trains_it_only_for_an_arm_that_uses_it(tmp_path):
    cache = tmp_path / "cache"
    done = run("--arms", "env", "--seeds", "1", "--episodes", "8", "--model", "drawer", "--out", str(tmp_path / "env"),
               env={"ROBO_REWARD_CACHE": str(cache)})
    assert done.returncode == 0 and "training the drawer-close model" not in done.stdout, done.stdout + done.stderr
    (cache / "drawer-model" / "stage-2").mkdir(parents=True)
    (cache / "drawer-model" / "stage-2" / "training.json").write_text('{"steps": 600}\n')  # trained (the run is stored)
    drawer = "the drawer-close model (training/drawer_model.py)"
    stored_loop_run(tmp_path / "loop" / "seed-0", dict(LOOP_SETTINGS, model=drawer))
    done = run("--arms", "loop", "--seeds", "1", "--watch-every", "2", "--finetune-every", "96",
               "--model", "drawer", "--out", str(tmp_path), env={"ROBO_REWARD_CACHE": str(cache)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "already in" in done.stdout and "training the drawer-close model" not in done.stdout
    assert f"loop: model {drawer}; reward mode delta" in done.stdout


CHECK = os.path.join(os.path.dirname(EXAMPLE), "reward_check.py")


def test_the_reward_check_scores_the_candidates_through_the_node_loop_and_counts_them(tmp_path):
    figures = tmp_path / "check.json"
    done = subprocess.run([sys.executable, CHECK, "--candidates", "8", "--json", str(figures)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 candidates rolled out in scene 0" in done.stdout
    kept = json.loads(figures.read_text())
    (model, summary), = kept["summary"].items()
    episodes = kept["episodes"][model]
    assert len(episodes) == 8 and kept["reward_mode"] == "delta"
    successes = [e["env_success_step"] is not None for e in episodes]
    decided = [e["node_success_sec"] is not None for e in episodes]
    assert summary["successes"] == sum(successes)
    assert summary["found"] + summary["false"] == sum(decided)
    assert summary["missed"] == sum(s and not d for s, d in zip(successes, decided))
    assert summary["base_rate"] == sum(successes) / 8
    assert all(isinstance(e["node_return"], float) and e["node_return"] == e["node_return"] for e in episodes)
    row = next(line for line in done.stdout.splitlines() if line.startswith("| the demo model |"))
    assert f"of {summary['successes']} |" in row


def test_the_reward_check_refuses_a_missing_model_and_a_partial_group(tmp_path):
    for args, message in ((("--model", str(tmp_path / "nothing")), "no such checkpoint directory"),
                          (("--candidates", "12"), "a positive multiple of 8")):
        done = subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and message in done.stderr, done.stderr
