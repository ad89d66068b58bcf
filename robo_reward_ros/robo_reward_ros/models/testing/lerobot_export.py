# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A Robometer checkpoint in LeRobot's export layout (``lerobot/Robometer-4B``), made from a published-layout one.

LeRobot saves its ``RobometerRewardModel`` as one ``model.safetensors`` whose backbone keys carry
one more ``model.`` (it wraps ``Qwen3VLForConditionalGeneration``: ``model.model.visual.*``,
``model.model.language_model.*``, plus the tied ``model.lm_head.weight``), head keys unchanged,
and a ``config.json`` of its own (``type: robometer``, ``base_model_id``, the progress settings,
the backbone's config serialised as ``vlm_config``; reward-models.md 1.1-1.2). No config.yaml.
Tests convert a tiny published checkpoint with it, so both layouts hold the same weights.

    python -m robo_reward_ros.models.testing.lerobot_export PUBLISHED_DIR OUT_DIR
"""
import json
import os
import sys

LEROBOT_CONFIG_FIELDS = {"pretrained_path": "robometer/Robometer-4B", "max_frames": 8, "reward_output": "progress",
                         "success_threshold": 0.5, "torch_dtype": "bfloat16", "use_multi_image": True,
                         "use_per_frame_progress_token": True, "average_temporal_patches": True,
                         "frame_pooling": "mean", "progress_loss_type": "discrete", "progress_discrete_bins": 10}


def export_like_lerobot(published_dir: str, out_dir: str) -> str:
    import yaml
    from safetensors import safe_open
    from safetensors.torch import save_file
    from robo_reward_ros.models.loading.checkpoint_layout import check_weight_files
    state = {}
    for shard in check_weight_files(published_dir):
        with safe_open(os.path.join(published_dir, shard), framework="pt") as handle:
            for key in handle.keys():
                tensor = handle.get_tensor(key)
                state["model." + key if key.startswith("model.") else key] = tensor
    state["model.lm_head.weight"] = state["model.model.language_model.embed_tokens.weight"].clone()
    with open(os.path.join(published_dir, "config.json"), encoding="utf-8") as handle:
        vlm_config = json.load(handle)
    vlm_config["architectures"] = ["Qwen3VLForConditionalGeneration"]
    with open(os.path.join(published_dir, "config.yaml"), encoding="utf-8") as handle:
        settings = yaml.safe_load(handle)
    os.makedirs(out_dir, exist_ok=True)
    save_file(state, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    config = {"type": "robometer", **LEROBOT_CONFIG_FIELDS,
              "base_model_id": settings["model"]["base_model_id"], "vlm_config": vlm_config}
    with open(os.path.join(out_dir, "config.json"), "w", encoding="utf-8") as handle:
        json.dump(config, handle, indent=2)
    return out_dir


if __name__ == "__main__":
    print(export_like_lerobot(sys.argv[1], sys.argv[2]))
