# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Session-scoped fixtures: tiny checkpoints in the published layouts, built once per test run.

Import into conftest.py with ``from model_fixtures import *  # noqa: F401,F403``.
"""
import numpy as np
import pytest

from robo_reward_ros.models.reward_model import Frame


def make_frames(count, height=224, width=224, seed=0, start=0.0, period=0.5):
    """Deterministic random RGB frames with evenly spaced stamps."""
    rng = np.random.default_rng(seed)
    return [Frame(stamp=start + i * period, rgb=rng.integers(0, 256, (height, width, 3), dtype=np.uint8))
            for i in range(count)]


@pytest.fixture(scope="session")
def tiny_robometer_dir(tmp_path_factory):
    """robometer/Robometer-4B layout; its base model (a Qwen3-VL-Instruct layout) is at ``base_model/``."""
    from robo_reward_ros.models.testing.tiny_checkpoints import build_robometer
    return build_robometer(str(tmp_path_factory.mktemp("ckpt") / "robometer"))


@pytest.fixture(scope="session")
def tiny_qwen3vl_dir(tiny_robometer_dir):
    """Return a plain Qwen3-VL-Instruct layout (TOPReward's model): the Robometer fixture's base model."""
    import os
    return os.path.join(tiny_robometer_dir, "base_model")


@pytest.fixture(scope="session")
def tiny_roboreward_dir(tmp_path_factory):
    from robo_reward_ros.models.testing.tiny_checkpoints import build_roboreward
    return build_roboreward(str(tmp_path_factory.mktemp("ckpt") / "roboreward"))


@pytest.fixture(scope="session")
def robometer_fp32(tiny_robometer_dir):
    from robo_reward_ros.models import load_reward_model
    model = load_reward_model(tiny_robometer_dir, precision="fp32", device="cpu")
    yield model
    model.close()


@pytest.fixture(scope="session")
def roboreward_fp32(tiny_roboreward_dir):
    from robo_reward_ros.models import load_reward_model
    model = load_reward_model(tiny_roboreward_dir, backend="roboreward", precision="fp32", device="cpu")
    yield model
    model.close()


@pytest.fixture(scope="session")
def topreward_fp32(tiny_qwen3vl_dir):
    from robo_reward_ros.models import load_reward_model
    model = load_reward_model(tiny_qwen3vl_dir, backend="topreward", precision="fp32", device="cpu")
    yield model
    model.close()
