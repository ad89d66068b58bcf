# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
import hashlib
import json
import os

from safetensors import safe_open

from robo_reward_ros.cli.tiny_checkpoint import main
from robo_reward_ros.models.testing.offline_qwen_tokenizer import build_qwen3_vl_tokenizer
from robo_reward_ros.models.testing.tiny_checkpoints import build_qwen3vl


def _keys_and_shapes(directory):
    with open(os.path.join(directory, "model.safetensors.index.json")) as handle:
        weight_map = json.load(handle)["weight_map"]
    shapes = {}
    for shard in sorted(set(weight_map.values())):
        with safe_open(os.path.join(directory, shard), framework="pt") as handle:
            for key in handle.keys():
                shapes[key] = tuple(handle.get_slice(key).get_shape())
    return weight_map, shapes


def test_robometer_layout_matches_the_published_one(tiny_robometer_dir):
    names = set(os.listdir(tiny_robometer_dir))
    assert {"config.json", "config.yaml", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors"} <= names
    assert not {"tokenizer.json", "tokenizer_config.json"} & names  # tokenizer comes from base_model_id
    with open(os.path.join(tiny_robometer_dir, "config.json")) as handle:
        config = json.load(handle)
    assert config["architectures"] == ["RFM"] and "auto_map" not in config
    assert config["model_type"] == "qwen3_vl" and config["text_config"]["vocab_size"] == 151674
    weight_map, shapes = _keys_and_shapes(tiny_robometer_dir)
    assert set(weight_map) == set(shapes)
    assert shapes["model.language_model.embed_tokens.weight"] == (151674, 64)
    assert any(k.startswith("model.visual.") for k in shapes)
    assert not any(k.startswith("lm_head") or k.startswith("model.model.") for k in shapes)
    for head, out in (("progress_head", 10), ("success_head", 1), ("preference_head", 1)):
        assert shapes[f"{head}.0.weight"] == (32, 64) and shapes[f"{head}.1.weight"] == (32,)
        assert shapes[f"{head}.4.weight"] == (out, 32) and shapes[f"{head}.4.bias"] == (out,)
        assert f"{head}.2.weight" not in shapes and f"{head}.3.weight" not in shapes
    assert shapes["frame_pool_attn.weight"] == (1, 64)


def test_robometer_config_yaml_points_at_the_base_model(tiny_robometer_dir):
    import yaml
    with open(os.path.join(tiny_robometer_dir, "config.yaml")) as handle:
        settings = yaml.safe_load(handle)
    base = settings["model"]["base_model_id"]
    assert os.path.isfile(os.path.join(base, "tokenizer.json"))
    assert os.path.isfile(os.path.join(base, "preprocessor_config.json"))
    assert settings["loss"]["progress_discrete_bins"] == 10 and settings["data"]["max_frames"] == 8


def test_tokenizer_has_the_real_qwen_ids():
    tokenizer = build_qwen3_vl_tokenizer()
    assert len(tokenizer) == 151669
    assert tokenizer("Hello, world!")["input_ids"] == [9707, 11, 1879, 0]
    ids = tokenizer.convert_tokens_to_ids(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>",
                                           "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"])
    assert ids == [151643, 151644, 151645, 151652, 151653, 151655, 151656]
    assert tokenizer.eos_token == "<|im_end|>"


def test_builder_is_deterministic(tmp_path):
    first = build_qwen3vl(str(tmp_path / "a"))
    main(["--layout", "qwen3vl", str(tmp_path / "b")])
    for name in ("model.safetensors", "config.json", "tokenizer.json", "preprocessor_config.json"):
        digests = [hashlib.sha256(open(os.path.join(d, name), "rb").read()).hexdigest()
                   for d in (first, str(tmp_path / "b"))]
        assert digests[0] == digests[1], name


def test_mid_size_preset_is_a_benchmark_sized_robometer():
    """Built on the meta device: the shapes, not the weights (the benchmark builds the real one)."""
    import torch
    from robo_reward_ros.models.backends.robometer_modeling import RobometerModel
    from robo_reward_ros.models.testing.tiny_checkpoints import ROBOMETER_VOCAB, tiny_qwen3_vl_config
    config = tiny_qwen3_vl_config(ROBOMETER_VOCAB, ["RFM"], size="mid")
    with torch.device("meta"):
        model = RobometerModel(config)
    assert 100e6 < sum(p.numel() for p in model.parameters()) < 300e6
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert all(m.in_features % 64 == 0 for m in linears)  # bitsandbytes 4-bit on CPU
    assert config.text_config.vocab_size == 151674 and config.vision_config.out_hidden_size == 512
