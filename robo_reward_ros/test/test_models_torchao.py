# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""torchao weight-only precisions (int8wo, int4wo) on the CPU, for the three backends.

They load, score near fp32 and save pre-quantized; a robot without bitsandbytes is told the
torchao preset when it asks for nf4.

Tolerances against fp32 (same frames, the tiny checkpoints of model_fixtures.py), measured on 4
frame sets: int8wo differs by at most 0.0071 (Robometer success; progress 0.0016, RoboReward
0.0003, TOPReward 0.0025 nats), as close as bf16 is (0.0051, 0.0011, 0.0002, 0.0011): int8 rows
with one scale each round a weight by at most 1/254 of the row's largest, bf16 by 2^-9 of the
weight itself. So int8wo gets bf16's order with room: 0.02. int4wo differs by at most 0.065
(Robometer success; progress 0.012, RoboReward 0.0033, TOPReward 0.031 nats), nf4 by at most
0.026 (0.015, 0.0031, 0.019): both store 4.5 bits per weight (4 bits plus 32 bits per 64
weights: nf4 an fp32 absmax, int4wo a bf16 scale and zero), so int4wo gets the nf4 test's bound: 0.1.
"""
import json
import os
import sys

import numpy as np
import pytest
import torch

from model_fixtures import make_frames
from robo_reward_ros.models import load_reward_model
from robo_reward_ros.models.loading.quantized_checkpoint import save_quantized

pytest.importorskip("torchao")

TOLERANCE = {"int8wo": 0.02, "int4wo": 0.1}
WEIGHT_TYPE = {"int8wo": "Int8Tensor", "int4wo": "Int4OpaqueTensor"}  # int4wo on the CPU


def _language_linear(model):
    """Return an MLP projection of the first decoder layer (the same path in every backend)."""
    return model.model.model.language_model.layers[0].mlp.up_proj


def _vision_linear(model):
    return model.model.model.visual.blocks[0].mlp.linear_fc1


@pytest.mark.parametrize("precision", ["int8wo", "int4wo"])
def test_robometer_scores_near_fp32(tiny_robometer_dir, robometer_fp32, precision):
    model = load_reward_model(tiny_robometer_dir, precision=precision, device="cpu")
    try:
        assert type(_language_linear(model).weight).__name__ == WEIGHT_TYPE[precision]
        assert type(_vision_linear(model).weight).__name__ == WEIGHT_TYPE[precision]
        assert type(model.model.progress_head[0].weight) is torch.nn.Parameter  # heads stay unquantized
        assert model.model.progress_head[0].weight.dtype == torch.bfloat16
        frames = make_frames(8, seed=21)
        out, reference = model.score("stack", frames), robometer_fp32.score("stack", frames)
        assert out.progress.shape == (8,) and np.all((out.progress >= 0) & (out.progress <= 1))
        assert np.max(np.abs(out.progress - reference.progress)) < TOLERANCE[precision]
        assert np.max(np.abs(out.success - reference.success)) < TOLERANCE[precision]
    finally:
        model.close()


@pytest.mark.parametrize("precision", ["int8wo", "int4wo"])
def test_roboreward_scores_near_fp32(tiny_roboreward_dir, roboreward_fp32, precision):
    model = load_reward_model(tiny_roboreward_dir, backend="roboreward", precision=precision, device="cpu")
    try:
        assert type(_language_linear(model).weight).__name__ == WEIGHT_TYPE[precision]
        assert type(model.model.lm_head.weight) is torch.nn.Parameter  # the digit logits come from it
        frames = make_frames(8, seed=22)
        out, reference = model.score("wipe", frames), roboreward_fp32.score("wipe", frames)
        assert abs(out.progress[0] - reference.progress[0]) < TOLERANCE[precision]
        assert np.max(np.abs(np.subtract(out.extras["score_probs"], reference.extras["score_probs"]))) \
            < TOLERANCE[precision]
    finally:
        model.close()


@pytest.mark.parametrize("precision", ["int8wo", "int4wo"])
def test_topreward_log_probs_near_fp32(tiny_qwen3vl_dir, topreward_fp32, precision):
    model = load_reward_model(tiny_qwen3vl_dir, backend="topreward", precision=precision, device="cpu")
    try:
        assert type(_language_linear(model).weight).__name__ == WEIGHT_TYPE[precision]
        frames = make_frames(4, seed=23)
        topreward_fp32.reset()
        got, expected = model.log_probs("fold", frames), topreward_fp32.log_probs("fold", frames)
        assert np.all(np.isfinite(got)) and np.max(np.abs(np.subtract(got, expected))) < TOLERANCE[precision]
        assert 0.0 <= model.score("fold", frames).progress[0] <= 1.0
    finally:
        model.close()


def test_prequantized_int8wo_checkpoint_is_safetensors_and_round_trips(tiny_robometer_dir, tmp_path):
    from safetensors import safe_open
    out_dir = save_quantized(tiny_robometer_dir, str(tmp_path / "int8wo"), precision="int8wo", device="cpu")
    config = json.load(open(os.path.join(out_dir, "config.json")))
    assert config["architectures"] == ["RFM"] and config["quantization_config"]["quant_method"] == "torchao"
    assert config["quantization_config"]["quant_type"]["default"]["_type"] == "Int8WeightOnlyConfig"
    assert not [n for n in os.listdir(out_dir) if n.endswith((".bin", ".pt", ".pth"))]
    with safe_open(os.path.join(out_dir, "model.safetensors"), framework="pt") as handle:
        keys = set(handle.keys())
    assert "model.language_model.layers.0.mlp.up_proj._weight_qdata" in keys  # int8 data, not bf16 weights
    assert "model.language_model.layers.0.mlp.up_proj.weight" not in keys
    at_load = load_reward_model(tiny_robometer_dir, precision="int8wo", device="cpu")
    reloaded = load_reward_model(out_dir, precision="int8wo", device="cpu")
    try:
        assert type(_language_linear(reloaded).weight).__name__ == "Int8Tensor"
        frames = make_frames(8, seed=24)
        np.testing.assert_allclose(reloaded.score("stack", frames).progress, at_load.score("stack", frames).progress,
                                   atol=1e-6)
    finally:
        reloaded.close()
        at_load.close()


def test_prequantized_int4wo_on_the_cpu_is_refused_before_loading(tmp_path):
    with pytest.raises(ValueError, match="save int4wo on the CUDA device"):
        save_quantized(str(tmp_path / "no-such-model"), str(tmp_path / "out"), precision="int4wo", device="cpu")
    assert not (tmp_path / "out").exists()


@pytest.fixture
def without_bitsandbytes(monkeypatch):
    """``import bitsandbytes`` raises ImportError, as on a pip install that left it out (a Jetson)."""
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)


def test_nf4_without_bitsandbytes_names_the_torchao_preset(tiny_robometer_dir, without_bitsandbytes):
    with pytest.raises(RuntimeError, match="needs the bitsandbytes package.*preset robometer-4b-int4wo"):
        load_reward_model(tiny_robometer_dir, precision="nf4", device="cpu")


def test_torchao_preset_loads_without_bitsandbytes(tiny_robometer_dir, without_bitsandbytes):
    from robo_reward_ros.settings.parameter_table import SPECS
    from robo_reward_ros.settings.node_settings import model_settings
    values = {spec.name: spec.default for spec in SPECS}
    values.update({"model.preset": "robometer-4b-int4wo", "model.id": tiny_robometer_dir, "model.device": "cpu"})
    settings = model_settings(values)
    assert (settings.backend, settings.precision) == ("robometer", "int4wo")
    model = load_reward_model(settings.model_id, backend=settings.backend, precision=settings.precision,
                              device=settings.device)
    try:
        assert 0.0 <= model.score("stack", make_frames(2, seed=25)).progress[-1] <= 1.0
    finally:
        model.close()
