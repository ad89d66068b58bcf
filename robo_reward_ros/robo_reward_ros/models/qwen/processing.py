# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Tokenizer, chat template and vision settings of a Qwen3-VL base model, and prompt expansion.

transformers' ``AutoProcessor`` for Qwen3-VL needs torchvision (its video processor), which is not
installable beside every torch build. So where torchvision is installed the processor is tried
first (to pick up the settings a user's full install reports) and, where it is not or the processor
cannot be built, the tokenizer and the JSON settings are read directly; the reason is logged.
Either way the pixels and the placeholder expansion are done here, so the two installs produce the
same token sequence.
"""
import dataclasses
import importlib.util
import json
import logging
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, TypeVar

import numpy as np

from robo_reward_ros.models.loading import hub_access
from robo_reward_ros.models.loading.checkpoint_layout import model_file

LOG = logging.getLogger(__name__)
T = TypeVar("T")

IMAGE_PAD = "<|image_pad|>"
VIDEO_PAD = "<|video_pad|>"
VISION_START = "<|vision_start|>"
VISION_END = "<|vision_end|>"

# Qwen3-VL-4B/8B-Instruct preprocessor defaults [U: read from the published JSON when present].
DEFAULT_IMAGE_SETTINGS = {"patch_size": 16, "merge_size": 2, "temporal_patch_size": 2,
                          "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
                          "size": {"shortest_edge": 65536, "longest_edge": 16777216}}
DEFAULT_VIDEO_SETTINGS = {"patch_size": 16, "merge_size": 2, "temporal_patch_size": 2,
                          "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
                          "size": {"shortest_edge": 4096, "longest_edge": 25165824}}


@dataclasses.dataclass
class VisionSettings:
    """Patch geometry and normalisation of one modality."""

    patch_size: int
    merge_size: int
    temporal_patch_size: int
    mean: Tuple[float, float, float]
    std: Tuple[float, float, float]
    min_pixels: int
    max_pixels: int

    @classmethod
    def from_dict(cls, settings: Dict[str, Any], defaults: Dict[str, Any]) -> "VisionSettings":
        merged = dict(defaults)
        merged.update({k: v for k, v in settings.items() if v is not None})
        size = dict(defaults["size"])
        size.update(merged.get("size") or {})
        return cls(patch_size=int(merged["patch_size"]), merge_size=int(merged["merge_size"]),
                   temporal_patch_size=int(merged["temporal_patch_size"]),
                   mean=tuple(float(x) for x in merged["image_mean"]),
                   std=tuple(float(x) for x in merged["image_std"]),
                   min_pixels=int(merged.get("min_pixels") or size["shortest_edge"]),
                   max_pixels=int(merged.get("max_pixels") or size["longest_edge"]))

    @property
    def factor(self) -> int:
        return self.patch_size * self.merge_size


def _read_json(name_or_path: str, filename: str) -> Optional[Dict[str, Any]]:
    path = model_file(name_or_path, filename)
    if path is None:
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _read_text(name_or_path: str, filename: str) -> Optional[str]:
    path = model_file(name_or_path, filename)
    if path is None:
        return None
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _object_settings(obj: Any) -> Dict[str, Any]:
    names = ("patch_size", "merge_size", "temporal_patch_size", "image_mean", "image_std", "size",
             "min_pixels", "max_pixels")
    out = {}
    for name in names:
        value = getattr(obj, name, None)
        if value is not None and hasattr(value, "items"):
            value = {k: v for k, v in value.items() if v is not None}
        if value is not None:
            out[name] = value
    return out


@dataclasses.dataclass
class VideoBlock:
    """One temporal patch (two frames) of a video, as the prompt and the vision tower see it."""

    timestamp: float
    num_tokens: int


class QwenProcessing:
    """What the reward backends need from a Qwen3-VL processor."""

    def __init__(self, tokenizer: Any, chat_template: str, image: VisionSettings, video: VisionSettings,
                 source: str) -> None:
        self.tokenizer = tokenizer
        self.chat_template = chat_template
        self.image = image
        self.video = video
        self.source = source

    @classmethod
    def from_pretrained(cls, name_or_path: str, padding_side: str = "right") -> "QwenProcessing":
        """Load from a model id or directory; never runs remote code."""
        from transformers import AutoTokenizer
        if not os.path.isdir(name_or_path):
            # Without a network, transformers retries for minutes; one probe switches to the cache.
            hub_access.probe(name_or_path)
        processor = None
        # Qwen3-VL's video processor needs torchvision. Without it AutoProcessor loads the whole
        # tokenizer (2 s for Qwen's 150k-token vocabulary) before it fails: ask first.
        if importlib.util.find_spec("torchvision") is None:
            LOG.info("torchvision is not installed: %s's processor from its tokenizer + processor JSON",
                     name_or_path)
        else:
            try:
                from transformers import AutoProcessor
                processor = AutoProcessor.from_pretrained(name_or_path, trust_remote_code=False)
            except Exception as exc:  # the fallback below reads the same settings from the JSON files
                reason = str(exc).splitlines()[0] if str(exc) else repr(exc.__cause__ or exc.__context__ or exc)
                LOG.info("AutoProcessor for %s unavailable (%s: %s); using tokenizer + processor JSON",
                         name_or_path, type(exc).__name__, reason)
        if processor is not None and getattr(processor, "tokenizer", None) is not None:
            tokenizer = processor.tokenizer
            image_raw = _object_settings(getattr(processor, "image_processor", None))
            video_raw = _object_settings(getattr(processor, "video_processor", None))
            template = getattr(processor, "chat_template", None) or tokenizer.chat_template
            source = "AutoProcessor"
        else:
            try:
                tokenizer = AutoTokenizer.from_pretrained(name_or_path, trust_remote_code=False)
            except Exception as exc:
                raise FileNotFoundError(f"no usable tokenizer in {name_or_path!r}: {exc}") from exc
            image_raw = _read_json(name_or_path, "preprocessor_config.json") or {}
            video_raw = _read_json(name_or_path, "video_preprocessor_config.json") or {}
            template = tokenizer.chat_template
            source = "tokenizer+json"
        if not template:
            template = _read_text(name_or_path, "chat_template.jinja")
        if not template:
            data = _read_json(name_or_path, "chat_template.json")
            template = data.get("chat_template") if data else None
        if not template:
            raise FileNotFoundError(f"no chat template found for {name_or_path!r}")
        tokenizer.padding_side = padding_side
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        image = VisionSettings.from_dict(image_raw, DEFAULT_IMAGE_SETTINGS)
        video = VisionSettings.from_dict(video_raw, DEFAULT_VIDEO_SETTINGS)
        return cls(tokenizer, template, image, video, source)

    def render(self, messages: List[Dict[str, Any]], **template_kwargs: Any) -> str:
        """Render the chat template as text (placeholders not yet expanded)."""
        return self.tokenizer.apply_chat_template(messages, chat_template=self.chat_template, tokenize=False,
                                                  **template_kwargs)

    def token_id(self, token: str) -> int:
        token_id = self.tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == self.tokenizer.unk_token_id:
            raise KeyError(f"token {token!r} is not in the vocabulary")
        return int(token_id)

    def expand(self, text: str, image_token_counts: Sequence[int] = (),
               videos: Sequence[Sequence[VideoBlock]] = ()) -> str:
        """Replace each image/video placeholder by its vision tokens, as Qwen3VLProcessor does.

        A video's ``<|vision_start|><|video_pad|><|vision_end|>`` becomes, per temporal block,
        ``<{t:.1f} seconds><|vision_start|>`` + pads + ``<|vision_end|>`` (transformers 4.57
        behaviour, which the reference implementations ran on).
        """
        parts = []
        images = iter(image_token_counts)
        video_iter = iter(videos)
        rest = text
        video_marker = VISION_START + VIDEO_PAD + VISION_END
        while True:
            i_img = rest.find(IMAGE_PAD)
            i_vid = rest.find(video_marker)
            if i_img < 0 and i_vid < 0:
                break
            if i_vid < 0 or (0 <= i_img < i_vid):
                parts.append(rest[:i_img])
                parts.append(IMAGE_PAD * int(next(images)))
                rest = rest[i_img + len(IMAGE_PAD):]
            else:
                parts.append(rest[:i_vid])
                for block in next(video_iter):
                    parts.append(f"<{block.timestamp:.1f} seconds>{VISION_START}"
                                 f"{VIDEO_PAD * block.num_tokens}{VISION_END}")
                rest = rest[i_vid + len(video_marker):]
        parts.append(rest)
        for leftover, name in ((images, "image"), (video_iter, "video")):
            if next(leftover, None) is not None:
                raise ValueError(f"more {name} inputs than placeholders in the prompt")
        return "".join(parts)

    def encode(self, text: str) -> np.ndarray:
        return np.asarray(self.tokenizer(text, add_special_tokens=False)["input_ids"], dtype=np.int64)

    def mm_token_type_ids(self, input_ids: np.ndarray) -> np.ndarray:
        """0 text, 1 image, 2 video: what Qwen3-VL's mRoPE index needs."""
        types = np.zeros_like(input_ids)
        types[input_ids == self.token_id(IMAGE_PAD)] = 1
        types[input_ids == self.token_id(VIDEO_PAD)] = 2
        return types


def pad_to_temporal_patch(items: Sequence[T], temporal_patch_size: int) -> List[T]:
    """Repeat the last item until the count fills whole temporal patches (frames, keys or times)."""
    items = list(items)
    while len(items) % temporal_patch_size:
        items.append(items[-1])
    return items


def block_timestamps(frame_times: Sequence[float], temporal_patch_size: int) -> List[float]:
    """Mid-time of each temporal block, as ``Qwen3VLProcessor._calculate_timestamps`` computes it.

    ``frame_times`` are seconds per frame (the processor's ``index / fps``); an odd count repeats
    the last frame's time, as the processor repeats the last index.
    """
    times = pad_to_temporal_patch(frame_times, temporal_patch_size)
    return [(times[i] + times[i + temporal_patch_size - 1]) / 2 for i in range(0, len(times), temporal_patch_size)]
