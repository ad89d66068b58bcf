# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A Robometer checkpoint in LeRobot's export layout (``lerobot/Robometer-4B``) loads and scores like the published one.

The export is made from the tiny published checkpoint (models/testing/lerobot_export.py: one
model.safetensors with ``model.model.*`` backbone keys and a tied lm_head, LeRobot's config.json
with ``vlm_config``, no config.yaml), so both hold the same weights and must give the same numbers.
"""
import numpy as np
import pytest

from model_fixtures import make_frames


@pytest.fixture(scope="module")
def lerobot_export_dir(tiny_robometer_dir, tmp_path_factory):
    from robo_reward_ros.models.testing.lerobot_export import export_like_lerobot
    return export_like_lerobot(tiny_robometer_dir, str(tmp_path_factory.mktemp("lerobot_export")))


def test_the_export_is_recognised_and_scores_exactly_as_the_published_layout(lerobot_export_dir, robometer_fp32):
    import os
    from robo_reward_ros.models.loading.loader import load_reward_model
    assert not os.path.exists(os.path.join(lerobot_export_dir, "config.yaml"))
    model = load_reward_model(lerobot_export_dir, backend="auto", precision="fp32", device="cpu")
    try:
        assert (model.name, model.max_frames, model.progress_bins) == ("robometer", 8, 10)
        frames = make_frames(5, 64, 64, seed=3)
        ours, published = model.score("pick up the cup", frames), robometer_fp32.score("pick up the cup", frames)
        np.testing.assert_allclose(ours.progress, published.progress, rtol=0, atol=1e-6)
        np.testing.assert_allclose(ours.success, published.success, rtol=0, atol=1e-6)
        assert model.prefer("pick up the cup", frames[:3], frames[2:]) == pytest.approx(
            robometer_fp32.prefer("pick up the cup", frames[:3], frames[2:]), abs=1e-6)
    finally:
        model.close()


def test_an_export_without_its_backbone_config_is_still_refused(tmp_path):
    import json
    from robo_reward_ros.models.loading.checkpoint_layout import CheckpointError, detect_backend
    config = {"type": "robometer", "pretrained_path": "robometer/Robometer-4B"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="unsupported architecture"):
        detect_backend(config)
