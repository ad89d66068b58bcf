"""The training/held-out episode sets: a scenario whose rendered outcome contradicts its label is skipped.

It is never mislabelled, and a rebuild does not render it again.
"""
import os

import pytest


def test_a_contradicted_scenario_is_skipped_once_and_remembered(tmp_path, monkeypatch):
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from robo_reward_ros.evaluation import metaworld_episodes
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
