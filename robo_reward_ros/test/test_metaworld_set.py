# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The training/held-out episode sets: a scenario whose rendered outcome contradicts its label is skipped.

It is never mislabelled, and a rebuild does not render it again.
"""
import os

import pytest


def test_the_training_set_excludes_the_test_tasks_and_the_validation_tasks():
    """The project's test tasks are never trained on and never choose settings (issue 18)."""
    from robo_reward_ros.training import metaworld_set
    reserved = {"button-press-v3", "door-close-v3", "handle-press-v3", "coffee-button-v3", "lever-pull-v3",
                "dial-turn-v3", "peg-insert-side-v3", "hammer-v3"}
    assert set(metaworld_set.TEST_TASKS) == reserved
    trained = {env for env, _ in metaworld_set.set_tasks("train")}
    instructions = {metaworld_set.TASK_INSTRUCTIONS[env] for env in trained}
    for held in (reserved, set(metaworld_set.VALIDATION_TASKS)):
        assert not trained & held
        assert not instructions & {metaworld_set.TASK_INSTRUCTIONS[env] for env in held}
    assert not reserved & set(metaworld_set.VALIDATION_TASKS)
    assert {env for env, _ in metaworld_set.set_tasks("test-tasks")} == reserved
    assert len(trained) == len(metaworld_set.TASK_INSTRUCTIONS) - len(reserved) - len(metaworld_set.VALIDATION_TASKS)


def test_a_contradicted_scenario_is_skipped_once_and_remembered(tmp_path, monkeypatch):
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from robo_reward_ros.simulation import metaworld_episodes
    from robo_reward_ros.training.metaworld_set import task_scenarios, write_scenarios
    # Action noise on drawer-close at seed 1 still closes the drawer: "failure" is contradicted.
    noisy = [s for s in task_scenarios("drawer-close-v3", "close the drawer", 1) if s.mode == "noise"]
    notes = []
    assert write_scenarios(noisy, str(tmp_path), log=notes.append) == []
    assert "expected failure" in notes[0] and "success" in notes[0]
    assert os.path.isfile(tmp_path / f"{noisy[0].name}.skipped")

    def must_not_render(*_args, **_kwargs):
        raise AssertionError("a skipped scenario was rendered again")
    monkeypatch.setattr(metaworld_episodes, "generate_episode", must_not_render)
    assert write_scenarios(noisy, str(tmp_path), log=notes.append) == []


def test_a_truncation_cut_from_the_expert_equals_the_rendered_truncation():
    """The set cuts truncated episodes from the expert instead of rendering them again: same frames and truth."""
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    import numpy as np
    from robo_reward_ros.simulation.metaworld_episodes import (Scenario, expert_success_step, generate_episode,
                                                               truncate_episode)
    expert = Scenario("reach_expert", "reach-v3", "reach the goal position", "expert", seed=1)
    truncated = Scenario("reach_truncated", "reach-v3", "reach the goal position", "truncated", seed=1,
                         fraction=0.8)
    first = expert_success_step(expert, 60)
    for every in (1, 2):
        rendered = generate_episode(truncated, 60, 64, frame_every=every)
        cut = truncate_episode(generate_episode(expert, 60, 64, frame_every=every), truncated, first)
        assert cut.outcome == rendered.outcome == "partial"
        # A frame every 2 steps: the rendered one also keeps its last step; the cut one ends on an even step.
        shared = [f.stamp for f in cut.frames]
        assert shared == [f.stamp for f in rendered.frames][:len(shared)]
        assert len(rendered.frames) - len(shared) <= (every - 1)
        for a, b in zip(cut.frames, rendered.frames):
            assert np.array_equal(a.rgb, b.rgb)
        assert cut.truth == rendered.truth[:len(cut.truth)]
    assert [f.stamp for f in rendered.frames][:3] == [0.0, 0.2, 0.4]


def test_drawer_close_frames_are_labelled_with_the_drawer_s_travel_before_the_success_step():
    """As reward / 10 the expert's frames were labelled <= 0.05 until success: a model learned the arm (issue 33)."""
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    import numpy as np
    from robo_reward_ros.simulation.metaworld_episodes import Scenario, generate_episode, travel_progress
    episode = generate_episode(Scenario("drawer_close_expert", "drawer-close-v3", "close the drawer", "expert",
                                        seed=1), 100, 32, frame_every=2)
    progress = np.array([row.progress for row in episode.truth])
    first = next(i for i, row in enumerate(episode.truth) if row.success)
    assert progress[0] == 0.0
    assert progress[first] == 1.0 and progress[first - 1] < 1.0
    before = progress[:first]
    assert np.all(np.diff(before[before > 0]) >= -0.02)  # the drawer moves one way
    assert ((before > 0.2) & (before < 0.9)).sum() >= 3  # in between, frames say how far it has come
    assert travel_progress(0.17, 0.17, 0.065) == 0.0 and travel_progress(0.17, 0.04, 0.065) == 1.0
    assert travel_progress(0.05, 0.06, 0.065) == 1.0  # started inside the success distance


def test_a_wandering_arm_s_episode_takes_its_outcome_from_the_rendered_truth():
    """Untrained agent motions as training data: whatever the draw does, the label is what happened."""
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from robo_reward_ros.simulation.metaworld_episodes import Scenario, generate_episode, wander_theta
    # At seed 11 draw 0 pushes the drawer shut; draw 2 never closes it (rendered 2026-12-07).
    closed, missed = (generate_episode(Scenario(f"wander{d}", "drawer-close-v3", "close the drawer", "wander",
                                                seed=11, onset=d), 50, 32, frame_every=2) for d in (0, 2))
    assert closed.outcome == "success" and closed.failure_kind == ""
    assert closed.truth[-1].progress == 1.0
    assert missed.outcome == "failure" and missed.failure_kind == "wander"
    assert max(row.progress for row in missed.truth) < 1.0
    same = Scenario("a", "drawer-close-v3", "close the drawer", "wander", seed=11, onset=2)
    assert (wander_theta(same) == wander_theta(Scenario("b", "reach-v3", "", "wander", seed=11, onset=2))).all()
    assert (wander_theta(same) != wander_theta(Scenario("c", "reach-v3", "", "wander", seed=11, onset=0))).any()
