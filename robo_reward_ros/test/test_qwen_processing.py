# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A Qwen3-VL processor read without torchvision: from the tokenizer and the JSON settings, at once.

Without torchvision transformers' AutoProcessor loads the whole tokenizer (2 s for Qwen's 150k-token
vocabulary) and then fails: trying it first had every model load pay for two tokenizers.
"""
import importlib.util
import json
import os

import pytest

from robo_reward_ros.models.qwen.processing import QwenProcessing


@pytest.mark.skipif(importlib.util.find_spec("torchvision") is not None, reason="torchvision is installed")
def test_without_torchvision_the_settings_come_from_the_json_files_and_no_processor_is_tried(
        tiny_qwen3vl_dir, monkeypatch):
    import transformers
    tried = []  # a raise here would be caught: the fallback handles a processor that fails
    monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained",
                        lambda *args, **kwargs: tried.append(args) or None)
    processing = QwenProcessing.from_pretrained(tiny_qwen3vl_dir)
    assert not tried, "AutoProcessor was tried although torchvision is not installed"
    with open(os.path.join(tiny_qwen3vl_dir, "preprocessor_config.json")) as handle:
        written = json.load(handle)
    assert processing.source == "tokenizer+json"
    assert (processing.image.patch_size, processing.image.merge_size) == (written["patch_size"],
                                                                          written["merge_size"])
    assert processing.image.max_pixels == written["size"]["longest_edge"]
    assert processing.token_id("<|vision_start|>") == processing.tokenizer.convert_tokens_to_ids("<|vision_start|>")
    assert processing.chat_template and processing.tokenizer.padding_side == "right"
