"""The committed demo model reads task progress from the images of episodes it never trained on.

It was trained here with ``robo-reward finetune``, see training/demo_model.py.

Seed-0 Meta-World episodes are held out of its training set (training/metaworld_set.py).
"""
import os

import numpy as np
import pytest


def progress_curve(backend, episode, points=6):
    frames = episode.frames[::2]
    ends = np.linspace(4, len(frames) - 1, points).astype(int)
    return np.array([backend.score(episode.instructions[0], frames[:end + 1]).progress[-1] for end in ends])


@pytest.fixture(scope="module")
def demo_model():
    from robo_reward_ros.evaluation.demo_assets import trained_demo_checkpoint, trained_model_source
    from robo_reward_ros.models.backends.robometer import RobometerBackend
    assert trained_model_source(), "the demo model's weights are missing from robo_reward_ros/data/demo-robometer"
    return RobometerBackend(trained_demo_checkpoint(), precision="fp32", device="cpu")


def test_demo_model_is_small_enough_to_commit():
    from robo_reward_ros.evaluation.demo_assets import TRAINED_FILES, TRAINED_MODEL_DIR
    size = sum(os.path.getsize(os.path.join(TRAINED_MODEL_DIR, n)) for n in TRAINED_FILES)
    assert size < 25e6


def test_progress_rises_on_a_held_out_success_and_falls_when_the_puck_is_dropped(demo_model):
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from robo_reward_ros.evaluation.metaworld_episodes import generate_episode, scenario_by_name
    expert = progress_curve(demo_model, generate_episode(scenario_by_name("pick_place_expert"), 100, 224))
    dropped = progress_curve(demo_model, generate_episode(scenario_by_name("pick_place_dropped"), 100, 224))
    assert expert[-1] > 0.6 and expert[-1] > expert[0] + 0.4, expert
    assert dropped[-1] < expert[-1] - 0.3, (dropped, expert)
