# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Deterministic tiny checkpoints in the published on-disk layouts, built offline.

Real transformers Qwen3-VL classes at tiny sizes (widths multiples of 64 so bitsandbytes 4-bit
runs on CPU), Qwen's real vocabulary and special-token ids, so the loaders and inference paths the
robot runs on the real weights run in tests in seconds.

    robo-reward tiny-checkpoint --layout robometer|roboreward|qwen3vl [--size mid] OUT_DIR   (cli/tiny_checkpoint.py)

Sizes: ``tiny`` (~10M parameters, almost all the embedding table; tests), ``mid`` (~160M: 12 text
layers of width 512, an 8-block vision tower; honest time/memory ratios between precisions in
benchmarks) and ``4b`` (the real Qwen3-VL-4B widths with random weights, ~9 GB in bf16: the real
architecture's cost in benchmarks). All keep the 4B model's structure (GQA, interleaved mRoPE,
deepstack, tied embeddings).

Layouts:
- ``qwen3vl``: a Qwen3-VL-Instruct directory (TOPReward's model): config.json,
  model.safetensors, generation_config.json, tokenizer, chat template, processor JSONs.
- ``roboreward``: the same layout (RoboReward-4B/8B are plain Qwen3-VL fine-tunes).
- ``robometer``: ``robometer/Robometer-4B`` layout: config.json (``architectures: ["RFM"]``),
  config.yaml, ``model-0000N-of-00002.safetensors`` + index, no tokenizer; its config.yaml's
  ``base_model_id`` points at ``OUT_DIR/base_model`` (a tiny ``qwen3vl`` layout).
"""
import contextlib
import json
import os
from typing import Dict, Optional

import torch
from safetensors.torch import save_file

from robo_reward_ros.models.loading.checkpoint_layout import write_sharded_weights
from robo_reward_ros.models.testing.offline_qwen_tokenizer import build_qwen3_vl_tokenizer
from robo_reward_ros.models.backends.robometer_special_tokens import ROBOMETER_SPECIAL_TOKENS

LAYOUTS = ("robometer", "roboreward", "qwen3vl")
QWEN_BASE_VOCAB = 151669  # real Qwen3-VL tokenizer length (vocab + added tokens)
QWEN3_VL_EMBEDDING_ROWS = 151936  # Qwen3-VL-4B-Instruct's padded embedding table
ROBOMETER_VOCAB = QWEN_BASE_VOCAB + len(ROBOMETER_SPECIAL_TOKENS)  # 151674
SEED = 1234

# Image processor settings of Qwen3-VL-Instruct (reward-models.md 1.5, ml-offline.md).
PREPROCESSOR_CONFIG = {
    "image_processor_type": "Qwen2VLImageProcessor", "processor_class": "Qwen3VLProcessor",
    "do_resize": True, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
    "do_convert_rgb": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
    "patch_size": 16, "merge_size": 2, "temporal_patch_size": 2,
    "size": {"shortest_edge": 65536, "longest_edge": 16777216},
}
VIDEO_PREPROCESSOR_CONFIG = {
    "video_processor_type": "Qwen3VLVideoProcessor", "processor_class": "Qwen3VLProcessor",
    "do_resize": True, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
    "do_convert_rgb": True, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
    "patch_size": 16, "merge_size": 2, "temporal_patch_size": 2, "fps": 2, "do_sample_frames": True,
    "size": {"shortest_edge": 4096, "longest_edge": 25165824},
}
ROBOMETER_CONFIG_YAML = """\
# Tiny stand-in for robometer/Robometer-4B's config.yaml (fields the loader reads).
model:
  base_model_id: {base_model_id}
  use_per_frame_progress_token: true
  frame_pooling: mean
  average_temporal_patches: false
  use_unsloth: true
data:
  use_multi_image: true
  max_frames: 8
loss:
  progress_loss_type: discrete
  progress_discrete_bins: 10
training:
  predict_pref_progress: true
"""


# Widths per size preset; every matrix side is a multiple of 64 (bitsandbytes 4-bit on CPU).
# mrope_section sums to head_dim / 2, split like the 4B model's [24, 20, 20] for head_dim 128.
SIZE_PRESETS = {
    "tiny": {"text": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, head_dim=16),
             "mrope_section": [4, 2, 2],
             "vision": dict(depth=2, hidden_size=64, intermediate_size=128, num_heads=4,
                            num_position_embeddings=256, deepstack_visual_indexes=[0, 1])},
    "mid": {"text": dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=12, num_attention_heads=8,
                         num_key_value_heads=4, head_dim=64),
            "mrope_section": [12, 10, 10],
            "vision": dict(depth=8, hidden_size=512, intermediate_size=1536, num_heads=8,
                           num_position_embeddings=2304, deepstack_visual_indexes=[1, 4, 7])},
    # The real Qwen3-VL-4B widths (reward-models.md 1.1), random weights: ~4.4B parameters, ~9 GB in
    # bf16 (built in bf16). For benchmarks of the real architecture's cost, never for tests.
    "4b": {"text": dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=36, num_attention_heads=32,
                        num_key_value_heads=8, head_dim=128),
           "mrope_section": [24, 20, 20], "max_position_embeddings": 262144,
           "vision": dict(depth=24, hidden_size=1024, intermediate_size=4096, num_heads=16,
                          num_position_embeddings=2304, deepstack_visual_indexes=[5, 11, 17])},
}
SIZES = tuple(SIZE_PRESETS)


def tiny_qwen3_vl_config(vocab_size: int, architectures, size: str = "tiny"):
    """Build a Qwen3-VL config with the 4B model's structure at small widths (all multiples of 64)."""
    from transformers import Qwen3VLConfig
    if size not in SIZE_PRESETS:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    preset = SIZE_PRESETS[size]
    text = dict(vocab_size=vocab_size, max_position_embeddings=preset.get("max_position_embeddings", 4096),
                rms_norm_eps=1e-6, tie_word_embeddings=True,
                rope_parameters={"rope_type": "default", "rope_theta": 5000000.0,
                                 "mrope_section": list(preset["mrope_section"]), "mrope_interleaved": True},
                **preset["text"])
    vision = dict(in_channels=3, patch_size=16, spatial_merge_size=2, temporal_patch_size=2,
                  out_hidden_size=preset["text"]["hidden_size"], **preset["vision"])
    config = Qwen3VLConfig(text_config=text, vision_config=vision, image_token_id=151655, video_token_id=151656,
                           vision_start_token_id=151652, vision_end_token_id=151653, tie_word_embeddings=True)
    config.architectures = list(architectures)
    return config


def _write_json(path: str, data: Dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")


def _write_tokenizer_and_processor(out_dir: str, tokenizer) -> None:
    tokenizer.save_pretrained(out_dir)
    with open(os.path.join(out_dir, "chat_template.jinja"), "w", encoding="utf-8") as handle:
        handle.write(tokenizer.chat_template)
    _write_json(os.path.join(out_dir, "preprocessor_config.json"), PREPROCESSOR_CONFIG)
    _write_json(os.path.join(out_dir, "video_preprocessor_config.json"), VIDEO_PREPROCESSOR_CONFIG)


def _bf16_state(module: torch.nn.Module) -> Dict[str, torch.Tensor]:
    return {k: v.detach().to(torch.bfloat16).contiguous() for k, v in module.state_dict().items()}


@contextlib.contextmanager
def _construction_dtype(size: str):
    """Build the 4b size directly in bf16 (its fp32 copy would need ~18 GB); the small ones in fp32."""
    previous = torch.get_default_dtype()
    if size == "4b":
        torch.set_default_dtype(torch.bfloat16)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def build_qwen3vl(out_dir: str, seed: int = SEED, size: str = "tiny", weights: bool = True) -> str:
    """Build a small Qwen3-VL-Instruct checkpoint directory (single bf16 safetensors file).

    ``weights=False`` writes everything but the weights (config, tokenizer, processor): for benchmarks
    that build the random model in memory from the config.
    """
    from transformers import GenerationConfig, Qwen3VLForConditionalGeneration
    os.makedirs(out_dir, exist_ok=True)
    tokenizer = build_qwen3_vl_tokenizer()
    config = tiny_qwen3_vl_config(QWEN3_VL_EMBEDDING_ROWS, ["Qwen3VLForConditionalGeneration"], size)
    config.dtype = "bfloat16"
    if weights:
        torch.manual_seed(seed)
        with _construction_dtype(size):
            model = Qwen3VLForConditionalGeneration(config).eval()
        state = _bf16_state(model)
        del model
        state.pop("lm_head.weight", None)  # tied to the embeddings, as published
        save_file(state, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
        del state
    config.save_pretrained(out_dir)
    GenerationConfig(bos_token_id=151643, eos_token_id=[151645, 151643], pad_token_id=151643, do_sample=False
                     ).save_pretrained(out_dir)
    _write_tokenizer_and_processor(out_dir, tokenizer)
    return out_dir


def build_roboreward(out_dir: str, seed: int = SEED + 1, size: str = "tiny", weights: bool = True) -> str:
    """RoboReward-4B/8B are plain Qwen3-VL fine-tunes: the same layout, other weights."""
    return build_qwen3vl(out_dir, seed, size, weights)


def build_robometer(out_dir: str, seed: int = SEED + 2, base_model_dir: Optional[str] = None,
                    size: str = "tiny", weights: bool = True) -> str:
    """Build a small ``robometer/Robometer-4B`` layout plus the base model its config.yaml names.

    The base model is always tiny: Robometer reads only its tokenizer and processor files.
    ``weights=False``: config.json, config.yaml and the base model only (see build_qwen3vl).
    """
    os.makedirs(out_dir, exist_ok=True)
    base_model_dir = os.path.abspath(base_model_dir or os.path.join(out_dir, "base_model"))
    if not os.path.isfile(os.path.join(base_model_dir, "config.json")):
        build_qwen3vl(base_model_dir, seed + 100)
    config = tiny_qwen3_vl_config(ROBOMETER_VOCAB, ["RFM"], size)
    config.dtype = "bfloat16"
    if weights:
        _write_robometer_weights(config, seed, size, out_dir)
    config_dict = config.to_dict()
    config_dict.pop("transformers_version", None)
    _write_json(os.path.join(out_dir, "config.json"), config_dict)
    with open(os.path.join(out_dir, "config.yaml"), "w", encoding="utf-8") as handle:
        handle.write(ROBOMETER_CONFIG_YAML.format(base_model_id=base_model_dir))
    return out_dir


def _write_robometer_weights(config, seed: int, size: str, out_dir: str) -> None:
    from robo_reward_ros.models.backends.robometer_modeling import HEAD_NAMES, RobometerModel
    torch.manual_seed(seed)
    with _construction_dtype(size):
        model = RobometerModel(config).eval()
    with torch.no_grad():  # spread the head outputs so per-frame values differ visibly in tests
        for name in HEAD_NAMES:
            for index in (0, 4):
                layer = getattr(model, name)[index]
                layer.weight.normal_(0.0, 0.5)
                layer.bias.normal_(0.0, 0.1)
    state = _bf16_state(model)
    del model
    write_sharded_weights(state, out_dir)


BUILDERS = {"robometer": build_robometer, "roboreward": build_roboreward, "qwen3vl": build_qwen3vl}


def build_checkpoint(layout: str, out_dir: str, size: str = "tiny", weights: bool = True) -> str:
    if layout not in BUILDERS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return BUILDERS[layout](out_dir, size=size, weights=weights)
