# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""RoboReward backend (``teetone/RoboReward-4B``/``-8B``: plain Qwen3-VL fine-tunes).

The model answers ``ANSWER: <1..5>`` about the end state of a clip. Instead of sampling, one
forward pass over the prompt plus the answer prefix ``ANSWER: `` gives the next-token distribution;
its mass on the five digit tokens, renormalised, gives an expected score E[s] and the reward
(E[s]-1)/4 (TrustJudge-style, reward-models.md section 4). The argmax digit is the parsed 1-5
answer; ``generate_answer`` runs real greedy generation with the Robometer-baseline parser.

Pairwise (``prefer``), as TrustRoboReward judges: both clips in one prompt, the question which one's
final state shows more progress, and the next-token distribution after ``ANSWER: `` restricted to
``A`` and ``B``. The pair is asked in both orders and the two answers averaged, so a judge's bias for
the first (or second) video cancels and ``prefer(a, b) == 1 - prefer(b, a)``. TrustRoboReward's own
Pair prompt is not published (reward-models.md 4a): PAIR_PROMPT is ours, in RoboReward's answer
format; a RoboReward checkpoint was never trained on it, so its pairwise answers are a baseline.

The video is built as the checkpoints were trained (``inputs="training"``): RoboReward's
``qwen-vl-finetune`` fork feeds each clip through transformers 4.57.1's Qwen3-VL processor, which
keeps 2 frames per second of the clip (4..8 frames), stamps them with their real times and sizes
them so that frames (rounded to even) x area lies in [256, 1024] x 28^2. ``inputs="robometer_baseline"``
builds the frame list as Robometer's RoboReward baseline does through qwen-vl-utils. Evidence for
each number: docs/reward-engine.md.
"""
import re
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from robo_reward_ros.models.backends.base import QwenRewardBackend
from robo_reward_ros.models.backends.frame_selection import linspace_indices, select_frames
from robo_reward_ros.models.qwen.loading import load_qwen3vl
from robo_reward_ros.models.qwen.processing import pad_to_temporal_patch
from robo_reward_ros.models.qwen.sequences import QwenSequence, collate, vision_inputs
from robo_reward_ros.models.qwen.video_blocks import Resize, video_blocks
from robo_reward_ros.models.qwen.vision_feature_cache import VisionFeatureCache, feature_source
from robo_reward_ros.models.qwen.vision_preprocessing import (resize_rgb, resize_rgb_antialiased, smart_resize,
                                                              video_smart_resize)
from robo_reward_ros.models.reward_model import Capabilities, Frame, ModelOutput, check_frames

# Verbatim from the model card / both reference implementations (reward-models.md section 2).
# [U] The card shows the first line and the rubric on consecutive lines; LeRobot PR #3354 adds a
# trailing newline, Robometer's baseline does not: the default follows the baseline.
RUBRIC_PROMPT = (
    "Given the task, assign a discrete progress score reward (1,2,3,4,5) for the robot in the video in the format: "
    "ANSWER: <score>\n"
    "Rubric for end-of-episode progress (judge only the final state without time limits):\n"
    "1 - No Success: Final state shows no goal-relevant change for the command.\n"
    "2 - Minimal Progress: Final state shows a small but insufficient change toward the goal.\n"
    "3 - Partial Completion: The final state shows good progress toward the goal but violates more than one "
    "requirement or a major requirement.\n"
    "4 - Near Completion: Final state is correct in region and intent but misses a single minor requirement.\n"
    "5 - Perfect Completion: Final state satisfies all requirements.\n"
    "\n"
    "Task: {task}")
ANSWER_PREFIX = "ANSWER: "
SCORES = (1, 2, 3, 4, 5)
PAIR_PROMPT = (
    "The two videos show a robot attempting the same task. Which video's final state shows more progress "
    "toward completing the task? Answer in the format: ANSWER: <A or B>\n"
    "Task: {task}")
PAIR_ANSWERS = ("A", "B")
INPUTS = ("training", "robometer_baseline")
# Training (qwen-vl-finetune DataArguments defaults; the RoboReward scripts set only image pixels):
# video_fps 2, video_min/max_frames 4/8, video_min/max_pixels 256*28*28 / 1024*28*28 (frames x area).
TRAINING_FPS, TRAINING_MIN_FRAMES, TRAINING_MAX_FRAMES = 2.0, 4, 8
TRAINING_MIN_PIXELS, TRAINING_MAX_PIXELS = 256 * 28 * 28, 1024 * 28 * 28
# qwen-vl-utils 0.0.14 frame lists: each frame as an image (4..16384 tokens of its factor), then the
# video's per-frame bounds (128..768 tokens of 32x32 pixels); frames numbered 0..n-1 at sample_fps.
BASELINE_MAX_FRAMES = 16
IMAGE_MIN_TOKENS, IMAGE_MAX_TOKENS, VIDEO_MIN_TOKENS, VIDEO_MAX_TOKENS = 4, 16384, 128, 768


def parse_score_answer(text: str) -> int:
    """Robometer baseline parser: ``ANSWER: n`` (1-5), else the last standalone 1-5, else 1."""
    match = re.search(r"ANSWER:\s*(\d+)", text, flags=re.IGNORECASE)
    if match and 1 <= int(match.group(1)) <= 5:
        return int(match.group(1))
    digits = re.findall(r"\b([1-5])\b", text)
    return int(digits[-1]) if digits else 1


def training_frame_indices(stamps: Sequence[float], fps: float = TRAINING_FPS, min_frames: int = TRAINING_MIN_FRAMES,
                           max_frames: int = TRAINING_MAX_FRAMES) -> List[int]:
    """Frames the training processor keeps of a clip (transformers 4.57.1 ``Qwen3VLVideoProcessor.sample_frames``).

    The clip's own rate comes from its stamps; ``int(frames / rate * fps)`` frames, clamped to
    [min_frames, max_frames] and to the clip, spread by rounded linspace. Stamps carry float noise,
    so a count on an integer boundary is read as the exact rate would give it.
    """
    total = len(stamps)
    span = float(stamps[-1] - stamps[0])
    duration = total * span / (total - 1) if total > 1 and span > 0 else total / fps
    count = min(max(int(duration * fps + 1e-6), min_frames), max_frames, total)
    return linspace_indices(total, count)


def expected_score(digit_logits: torch.Tensor) -> torch.Tensor:
    """E[s] over scores 1..5 from the five digit logits (softmax restricted to them)."""
    probs = torch.softmax(digit_logits.float(), dim=-1)
    return (probs * torch.arange(1, 6, dtype=torch.float32, device=probs.device)).sum(dim=-1)


class RoboRewardBackend(QwenRewardBackend):
    """End-of-clip progress score with a continuous reward; one value per query (the newest frame)."""

    name = "roboreward"
    capabilities = Capabilities(progress=True, success=False, preference=True)

    def __init__(self, model_id: str, precision: str = "bf16", device: str = "auto", inputs: str = "training",
                 max_frames: Optional[int] = None, sample_fps: float = 2.0, trailing_newline: bool = False,
                 cache_vision: bool = True, vision_runtime: str = "torch", vision_onnx: Optional[str] = None,
                 onnx_providers: Optional[Sequence[str]] = None) -> None:
        """Build the video as trained (``inputs="training"``) or as the Robometer baseline; 8 or 16 frames.

        ``sample_fps``: frames kept per second of the clip (training) or the rate the frame list is
        numbered at (baseline); both references default to 2.
        """
        if inputs not in INPUTS:
            raise ValueError(f"inputs must be one of {INPUTS}, got {inputs!r}")
        super().__init__(model_id, device, cache_vision, vision_runtime, vision_onnx, onnx_providers)
        self.model, self.processing = load_qwen3vl(model_id, precision, self.device)
        self.inputs = inputs
        # The training inputs size the clip as a video (any shape); the baseline's per-frame image
        # resize refuses the extreme aspect ratios.
        self.max_aspect_ratio = None if inputs == "training" else QwenRewardBackend.max_aspect_ratio
        default_frames = TRAINING_MAX_FRAMES if inputs == "training" else BASELINE_MAX_FRAMES
        self.max_frames = int(max_frames if max_frames is not None else default_frames)
        self.sample_fps = float(sample_fps)
        self.trailing_newline = trailing_newline
        self.digit_ids = [self.processing.token_id(str(k)) for k in SCORES]
        self.pair_ids = [self.processing.token_id(answer) for answer in PAIR_ANSWERS]

    def prompt_text(self, instruction: str) -> str:
        return RUBRIC_PROMPT.format(task=instruction) + ("\n" if self.trailing_newline else "")

    def sequence(self, instruction: str, frames: Sequence[Frame], answer_prefix: str = ANSWER_PREFIX) -> QwenSequence:
        """Video first, then the rubric, one user turn, generation prompt, then the answer prefix.

        ``frames`` are the video as chosen by ``select``; they are sized and stamped by ``inputs``.
        """
        rgbs, times, size, resize = (self._training_video(frames) if self.inputs == "training"
                                     else self._baseline_video(frames))
        vision, prompt_blocks, whole = video_blocks(rgbs, size, self.processing.video, times, resize=resize)
        messages = [{"role": "user", "content": [{"type": "video"},
                                                 {"type": "text", "text": self.prompt_text(instruction)}]}]
        text = self.processing.render(messages, add_generation_prompt=True) + answer_prefix
        ids = self.processing.encode(self.processing.expand(text, videos=[prompt_blocks]))
        return QwenSequence(ids, self.processing.mm_token_type_ids(ids), vision, "video", video_source=whole)

    def pair_sequence(self, instruction: str, first: Sequence[Frame], second: Sequence[Frame]) -> QwenSequence:
        """Video A, video B (each as ``select`` chose and ``inputs`` sizes it), the Pair prompt, ``ANSWER: ``.

        The uncached reference path gets both whole clips, each with its own grid.
        """
        content, vision, prompts, wholes = [], [], [], []
        for label, frames in zip(PAIR_ANSWERS, (first, second)):
            rgbs, times, size, resize = (self._training_video(frames) if self.inputs == "training"
                                         else self._baseline_video(frames))
            blocks, prompt_blocks, whole = video_blocks(rgbs, size, self.processing.video, times, resize=resize)
            vision += blocks
            prompts.append(prompt_blocks)
            wholes.append(whole)
            content += [{"type": "text", "text": f"Video {label}: "}, {"type": "video"}]
        content.append({"type": "text", "text": PAIR_PROMPT.format(task=instruction)})
        text = self.processing.render([{"role": "user", "content": content}], add_generation_prompt=True)
        ids = self.processing.encode(self.processing.expand(text + ANSWER_PREFIX, videos=prompts))

        def both_clips() -> Tuple[np.ndarray, List[tuple]]:
            clips = [whole() for whole in wholes]
            return np.concatenate([patches for patches, _ in clips], axis=0), [grid for _, grid in clips]

        return QwenSequence(ids, self.processing.mm_token_type_ids(ids), vision, "video", video_source=both_clips)

    def _training_video(self, frames: Sequence[Frame]) -> Tuple[List[np.ndarray], List[float], Tuple[int, int], Resize]:
        """Size and stamp as the 4.57.1 video processor: one resize (frames x area bounds), real times.

        An odd count repeats the last frame and its time (the processor repeats the index); a single
        frame is sized as the two-frame clip it becomes (the processor itself refuses one frame).
        """
        video = self.processing.video
        rgbs = [f.rgb for f in frames]
        times = [round(f.stamp - frames[0].stamp, 6) for f in frames]  # float noise off the .1f labels
        size = video_smart_resize(max(len(rgbs), video.temporal_patch_size), rgbs[0].shape[0], rgbs[0].shape[1],
                                  video.factor, video.temporal_patch_size, TRAINING_MIN_PIXELS, TRAINING_MAX_PIXELS)
        return rgbs, times, size, resize_rgb_antialiased

    def _baseline_video(self, frames: Sequence[Frame]) -> Tuple[List[np.ndarray], List[float], Tuple[int, int], Resize]:
        """qwen-vl-utils ``fetch_video`` on a frame list: pad to even, number 0..n-1, two resizes.

        Each frame is first sized as an image (``fetch_image``: PIL bicubic), then the video resize
        (torchvision's float bicubic, antialiased) applies the per-frame video bounds to that size.
        """
        video = self.processing.video
        factor = video.factor
        rgbs = pad_to_temporal_patch([f.rgb for f in frames], video.temporal_patch_size)
        times = [i / self.sample_fps for i in range(len(rgbs))]
        # fetch_video hands its factor (32) to fetch_image as the patch size, which multiplies it by
        # the merge size again: each frame is first rounded to multiples of 64 (224 -> 256).
        frame_factor = factor * video.merge_size
        image_size = smart_resize(rgbs[0].shape[0], rgbs[0].shape[1], frame_factor,
                                  IMAGE_MIN_TOKENS * frame_factor ** 2, IMAGE_MAX_TOKENS * frame_factor ** 2)
        size = smart_resize(*image_size, factor, VIDEO_MIN_TOKENS * factor ** 2, VIDEO_MAX_TOKENS * factor ** 2)

        def resize(rgb: np.ndarray, height: int, width: int) -> np.ndarray:
            return resize_rgb_antialiased(resize_rgb(rgb, *image_size), height, width, via_float=True)

        return rgbs, times, size, resize

    def select(self, frames: Sequence[Frame]) -> List[Frame]:
        """Training: the processor's 2 fps sampling (4..max_frames); baseline: linspace to max_frames."""
        check_frames(frames)
        frames = list(frames)
        if self.inputs == "training":
            indices = training_frame_indices([f.stamp for f in frames], self.sample_fps, TRAINING_MIN_FRAMES,
                                             self.max_frames)
            return [frames[i] for i in indices]
        return select_frames(frames, self.max_frames, "linspace")

    @torch.inference_mode()
    def digit_logits(self, sequences: Sequence[QwenSequence], use_cache: Optional[bool] = None) -> torch.Tensor:
        """Return the next-token logits (whole vocabulary) after each sequence's last token."""
        use_cache = self.vision_cache.enabled if use_cache is None else use_cache
        return self._next_token_logits(sequences, feature_source(self.vision_cache, use_cache))

    def _next_token_logits(self, sequences: Sequence[QwenSequence],
                           source: Optional[VisionFeatureCache]) -> torch.Tensor:
        inputs = collate(sequences, self.processing.tokenizer.pad_token_id, self.device)
        inputs.update(vision_inputs(self.model.model, sequences, source, self.processing.video.merge_size,
                                    self.device))
        hidden = self.model.model(**inputs).last_hidden_state
        last = inputs["attention_mask"].sum(dim=1) - 1
        rows = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
        logits = self.model.lm_head(rows).float()
        return logits

    @torch.inference_mode()
    def score(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        chosen = self.select(frames)
        logits = self.digit_logits([self.sequence(instruction, chosen)])[0]
        digit_logits = logits[self.digit_ids]
        expected = float(expected_score(digit_logits))
        probs = torch.softmax(digit_logits, dim=-1).cpu().numpy()
        digit_mass = float(torch.softmax(logits, dim=-1)[self.digit_ids].sum())
        extras: Dict[str, object] = {"expected_score": expected, "answer_score": int(np.argmax(probs)) + 1,
                                     "score_probs": probs.tolist(), "digit_mass": digit_mass}
        return ModelOutput(progress=[(expected - 1.0) / 4.0], stamps=[chosen[-1].stamp], backend=self.name,
                           input_stamps=[f.stamp for f in chosen], extras=extras)

    @torch.inference_mode()
    def prefer(self, instruction: str, clip_a: Sequence[Frame], clip_b: Sequence[Frame]) -> float:
        """Probability that clip A shows more progress than clip B: both orders asked, averaged.

        The clips' vision blocks are encoded without touching the streaming cache (which keeps only
        the latest window's blocks), so a comparison mid-episode costs the live window nothing.
        """
        a, b = self.select(clip_a), self.select(clip_b)
        source = VisionFeatureCache(enabled=False, encoder=self.vision_cache.encoder)
        first_wins = []
        for first, second in ((a, b), (b, a)):
            logits = self._next_token_logits([self.pair_sequence(instruction, first, second)], source)[0]
            first_wins.append(float(torch.softmax(logits[self.pair_ids], dim=-1)[0]))
        return 0.5 * (first_wins[0] + 1.0 - first_wins[1])

    @torch.inference_mode()
    def generate_answer(self, instruction: str, frames: Sequence[Frame], max_new_tokens: int = 16) -> Dict[str, object]:
        """Greedy generation as the reference implementations do; returns the text and parsed score."""
        seq = self.sequence(instruction, self.select(frames), answer_prefix="")
        inputs = collate([seq], self.processing.tokenizer.pad_token_id, self.device)
        inputs.update(vision_inputs(self.model.model, [seq], None, self.processing.video.merge_size, self.device))
        output = self.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        text = self.processing.tokenizer.decode(output[0, len(seq.input_ids):], skip_special_tokens=True)
        return {"text": text, "score": parse_score_answer(text)}
