# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""TOPReward backend: training-free progress from log P(" True") of a Qwen3-VL instruct model.

Prompt, scored token and frame sizing follow reward-models.md section 3 (default
``add_chat_template=False`` as upstream and LeRobot). Online, each query scores the current window
as one video and the causal normaliser turns the log-probability into progress; offline,
``score_episode`` scores the upstream prefix schedule and normalises with hindsight.
"""
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from robo_reward_ros.models.backends.base import QwenRewardBackend
from robo_reward_ros.models.backends.frame_selection import tail_indices
from robo_reward_ros.models.backends.topreward_normalization import CausalMinMax, hindsight_progress, prefix_lengths
from robo_reward_ros.models.qwen.loading import load_qwen3vl
from robo_reward_ros.models.qwen.prefix_kv_cache import PrefixKVCache
from robo_reward_ros.models.qwen.sequences import QwenSequence
from robo_reward_ros.models.qwen.video_blocks import video_blocks
from robo_reward_ros.models.qwen.vision_feature_cache import pixel_key
from robo_reward_ros.models.qwen.vision_preprocessing import video_smart_resize
from robo_reward_ros.models.reward_model import Capabilities, Frame, ModelOutput, check_frames

PREFIX = "The above video shows a robot manipulation trajectory that completes the following task: "
QUESTION = "{instruction} Decide whether the above statement is True or not. The answer is:"
FRAME_SIZE = 244  # upstream PIL-resizes every frame to 244x244; the processor then rounds to 256


class TOPRewardBackend(QwenRewardBackend):
    """Zero-shot progress; declares progress only (P("True") is reported in ``extras``)."""

    name = "topreward"
    capabilities = Capabilities(progress=True, success=False, preference=False)
    max_aspect_ratio = None  # every frame is resized to a square first: any shape is scored

    def __init__(self, model_id: str, precision: str = "bf16", device: str = "auto", max_frames: int = 16,
                 video_fps: float = 2.0, add_chat_template: bool = False, cache_vision: bool = True,
                 cache_prefix: bool = True, min_span: float = 0.5, ceiling: Optional[float] = None,
                 vision_runtime: str = "torch", vision_onnx: Optional[str] = None,
                 onnx_providers: Optional[Sequence[str]] = None) -> None:
        """``vision_runtime="onnx"``: the cached path's vision tower from ``vision_onnx`` (see RobometerBackend).

        The uncached reference path (``use_cache=False``) always runs the torch tower.
        """
        super().__init__(model_id, device, cache_vision, vision_runtime, vision_onnx, onnx_providers)
        self.model, self.processing = self._load(model_id, precision)
        self.max_frames = int(max_frames)
        self.video_fps = float(video_fps)
        self.add_chat_template = add_chat_template
        self.prefix_cache = PrefixKVCache(enabled=cache_prefix)
        self._square_cache: Dict[bytes, Tuple[np.ndarray, bytes]] = {}
        self.normaliser = CausalMinMax(min_span=min_span, ceiling=ceiling)
        self.true_id = int(self.processing.encode(" True")[0])
        self.false_id = int(self.processing.encode(" False")[0])

    def _load(self, model_id: str, precision: str):
        """Weights and processing (a benchmark subclass builds random weights from the config instead)."""
        return load_qwen3vl(model_id, precision, self.device, padding_side="left")

    def sequence(self, instruction: str, frames: Sequence[Frame]) -> QwenSequence:
        """Build the scored prompt for a video of ``frames`` (frame indices 0..n-1 at ``video_fps``).

        An odd count is padded by repeating the last frame *and its index*, as the references'
        processors do: a single frame is one block stamped ``<0.0 seconds>``.
        """
        rgbs, keys = self._squares(frames)
        video = self.processing.video
        num = len(rgbs) + len(rgbs) % video.temporal_patch_size
        size = video_smart_resize(num, FRAME_SIZE, FRAME_SIZE, video.factor, video.temporal_patch_size,
                                  video.min_pixels, video.max_pixels)
        times = [i / self.video_fps for i in range(len(rgbs))]
        vision, prompt_blocks, whole = video_blocks(rgbs, size, video, times, keys)
        if self.add_chat_template:
            text = PREFIX + QUESTION.format(instruction=instruction)
            messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": text}]}]
            prompt = self.processing.render(messages, add_generation_prompt=True) + "True"
        else:
            messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": PREFIX}]}]
            rendered = self.processing.render(messages, add_generation_prompt=False)
            eos = self.processing.tokenizer.eos_token
            prompt = rendered.split(eos, 1)[0] + instruction + QUESTION[len("{instruction}"):] + " True"
        ids = self.processing.encode(self.processing.expand(prompt, videos=[prompt_blocks]))
        return QwenSequence(ids, self.processing.mm_token_type_ids(ids), vision, "video", video_source=whole)

    def _squares(self, frames: Sequence[Frame]) -> Tuple[List[np.ndarray], List[bytes]]:
        """Each frame at FRAME_SIZE squared, with its pixel key.

        Kept while the frame stays in the query (keyed by the frame's own pixels), so a streaming
        step resizes only the new frames.
        """
        squares, keys, kept = [], [], {}
        for frame in frames:
            original = pixel_key(frame.rgb)
            entry = kept.get(original) or self._square_cache.get(original)
            if entry is None:
                square = _square(frame.rgb, FRAME_SIZE)
                entry = (square, pixel_key(square))
            kept[original] = entry
            squares.append(entry[0])
            keys.append(entry[1])
        self._square_cache = kept
        return squares, keys

    def log_probs(self, instruction: str, frames: Sequence[Frame], use_cache: Optional[bool] = None
                  ) -> Tuple[float, float]:
        """(log P(True), log P(False)) at the answer position, for a video of ``frames``."""
        check_frames(frames)
        seq = self.sequence(instruction, frames)
        if use_cache is None:
            use_cache = (self.prefix_cache.enabled or self.vision_cache.enabled
                         or self.vision_cache.encoder is not None)  # the ONNX encoder runs on the cached path
        if use_cache:  # the score is read from the second-to-last position
            output, _ = self.prefix_cache.forward(self.model, self.model.model, seq, self.vision_cache,
                                                  self.processing.video.merge_size, self.device,
                                                  read_from=len(seq.input_ids) - 2, logits_to_keep=2)
            logits = output.logits[0, -2:].float()
        else:
            logits = self._last_two_logits_uncached(seq)
        log_softmax = torch.log_softmax(logits[0], dim=-1)
        scored = int(seq.input_ids[-1])
        return float(log_softmax[scored]), float(log_softmax[self.false_id])

    @torch.inference_mode()
    def _last_two_logits_uncached(self, seq: QwenSequence) -> torch.Tensor:
        """Run the reference: one plain forward with the whole clip's pixels, as the processor lays them out."""
        ids = torch.from_numpy(seq.input_ids)[None].to(self.device)
        types = torch.from_numpy(seq.mm_token_type_ids)[None].to(self.device)
        patches, video_grid = seq.whole_video()
        pixels = torch.from_numpy(patches).to(self.device)
        grid = torch.tensor([video_grid], dtype=torch.long, device=self.device)
        output = self.model(input_ids=ids, mm_token_type_ids=types, pixel_values_videos=pixels, video_grid_thw=grid,
                            logits_to_keep=2, use_cache=False)
        return output.logits[0, -2:].float()

    def score(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        """Online: the newest ``max_frames`` as one video, normalised causally within the episode."""
        window = [frames[i] for i in tail_indices(len(frames), self.max_frames)]
        log_true, log_false = self.log_probs(instruction, window)
        progress = self.normaliser.update(log_true)
        return ModelOutput(progress=[progress], stamps=[window[-1].stamp], backend=self.name,
                           input_stamps=[f.stamp for f in window],
                           extras={"log_prob_true": log_true, "log_prob_false": log_false,
                                   "p_true": float(np.exp(log_true))})

    def score_episode(self, instruction: str, frames: Sequence[Frame], num_samples: int = 15,
                      use_cache: Optional[bool] = None) -> ModelOutput:
        """Offline: prefix rewards on the upstream schedule, hindsight min-max onto every frame."""
        check_frames(frames)
        lengths = prefix_lengths(len(frames), num_samples)
        rewards = [self.log_probs(instruction, frames[:length], use_cache)[0] for length in lengths]
        progress = hindsight_progress(lengths, rewards, len(frames))
        return ModelOutput(progress=progress, stamps=[f.stamp for f in frames], backend=self.name,
                           input_stamps=[f.stamp for f in frames],
                           extras={"prefix_lengths": lengths, "log_prob_true": rewards})

    def reset(self) -> None:
        super().reset()
        self.normaliser.reset()
        self.prefix_cache.clear()
        self._square_cache = {}


def _square(rgb: np.ndarray, side: int) -> np.ndarray:
    from robo_reward_ros.models.qwen.vision_preprocessing import resize_rgb
    return resize_rgb(rgb, side, side)
