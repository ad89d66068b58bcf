# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
import numpy as np
import pytest

from model_fixtures import make_frames
from robo_reward_ros.models import load_reward_model
from robo_reward_ros.models.loading.quantized_checkpoint import save_quantized

pytest.importorskip("bitsandbytes")


@pytest.fixture(scope="module")
def robometer_nf4(tiny_robometer_dir):
    model = load_reward_model(tiny_robometer_dir, precision="nf4", device="cpu")
    yield model
    model.close()


def test_nf4_loads_and_scores_on_cpu(robometer_nf4, robometer_fp32):
    import bitsandbytes as bnb
    assert isinstance(robometer_nf4.model.model.language_model.layers[0].mlp.up_proj, bnb.nn.Linear4bit)
    assert not isinstance(robometer_nf4.model.progress_head[0], bnb.nn.Linear4bit)  # heads stay unquantized
    frames = make_frames(8, seed=9)
    out = robometer_nf4.score("stack", frames)
    reference = robometer_fp32.score("stack", frames)
    assert out.progress.shape == (8,) and np.all((out.progress >= 0) & (out.progress <= 1))
    assert np.max(np.abs(out.progress - reference.progress)) < 0.1


def test_int8_loads_and_scores_on_cpu(tiny_robometer_dir):
    import bitsandbytes as bnb
    model = load_reward_model(tiny_robometer_dir, precision="int8", device="cpu")
    try:
        assert isinstance(model.model.model.language_model.layers[0].mlp.up_proj, bnb.nn.Linear8bitLt)
        out = model.score("stack", make_frames(4, seed=10))
        assert np.all((out.progress >= 0) & (out.progress <= 1)) and np.all((out.success > 0) & (out.success < 1))
    finally:
        model.close()


def test_prequantized_nf4_checkpoint_round_trips(robometer_nf4, tiny_robometer_dir, tmp_path):
    import json
    import bitsandbytes as bnb
    out_dir = save_quantized(tiny_robometer_dir, str(tmp_path / "nf4"), precision="nf4", device="cpu")
    config = json.load(open(f"{out_dir}/config.json"))
    assert config["architectures"] == ["RFM"] and config["quantization_config"]["bnb_4bit_quant_type"] == "nf4"
    reloaded = load_reward_model(out_dir, precision="nf4", device="cpu")
    try:
        assert isinstance(reloaded.model.model.language_model.layers[0].mlp.up_proj, bnb.nn.Linear4bit)
        frames = make_frames(8, seed=11)
        np.testing.assert_allclose(reloaded.score("stack", frames).progress,
                                   robometer_nf4.score("stack", frames).progress, atol=1e-5)
    finally:
        reloaded.close()


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_half_precisions_score(tiny_qwen3vl_dir, precision):
    model = load_reward_model(tiny_qwen3vl_dir, backend="topreward", precision=precision, device="cpu")
    try:
        log_true, _ = model.log_probs("pick", make_frames(2, height=64, width=64))
        assert np.isfinite(log_true) and log_true < 0
    finally:
        model.close()
