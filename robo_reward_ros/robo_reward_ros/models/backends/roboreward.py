"""RoboReward backend (``teetone/RoboReward-4B``/``-8B``: plain Qwen3-VL fine-tunes).

The model answers ``ANSWER: <1..5>`` about the end state of a clip. Instead of sampling, one
forward pass over the prompt plus the answer prefix ``ANSWER: `` gives the next-token distribution;
its mass on the five digit tokens, renormalised, gives an expected score E[s] and the reward
(E[s]-1)/4 (TrustJudge-style, reward-models.md section 4). The argmax digit is the parsed 1-5
answer; ``generate_answer`` runs real greedy generation with the Robometer-baseline parser.
"""
import re
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch

from robo_reward_ros.models.backends.base import QwenRewardBackend
from robo_reward_ros.models.backends.frame_selection import select_frames
from robo_reward_ros.models.qwen.loading import load_qwen3vl
from robo_reward_ros.models.qwen.sequences import QwenSequence, collate, vision_inputs
from robo_reward_ros.models.qwen.video_blocks import video_blocks
from robo_reward_ros.models.qwen.vision_feature_cache import feature_source
from robo_reward_ros.models.qwen.vision_preprocessing import smart_resize
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
# qwen-vl-utils per-frame video bounds: 128..768 merged tokens of 32x32 pixels.
VIDEO_FACTOR, VIDEO_MIN_PIXELS, VIDEO_MAX_PIXELS = 32, 128 * 32 * 32, 768 * 32 * 32


def parse_score_answer(text: str) -> int:
    """Robometer baseline parser: ``ANSWER: n`` (1-5), else the last standalone 1-5, else 1."""
    match = re.search(r"ANSWER:\s*(\d+)", text, flags=re.IGNORECASE)
    if match and 1 <= int(match.group(1)) <= 5:
        return int(match.group(1))
    digits = re.findall(r"\b([1-5])\b", text)
    return int(digits[-1]) if digits else 1


def expected_score(digit_logits: torch.Tensor) -> torch.Tensor:
    """E[s] over scores 1..5 from the five digit logits (softmax restricted to them)."""
    probs = torch.softmax(digit_logits.float(), dim=-1)
    return (probs * torch.arange(1, 6, dtype=torch.float32, device=probs.device)).sum(dim=-1)


class RoboRewardBackend(QwenRewardBackend):
    """End-of-clip progress score with a continuous reward; one value per query (the newest frame)."""

    name = "roboreward"
    capabilities = Capabilities(progress=True, success=False, preference=False)

    def __init__(self, model_id: str, precision: str = "bf16", device: str = "auto", max_frames: int = 16,
                 sample_fps: float = 2.0, trailing_newline: bool = False, cache_vision: bool = True,
                 vision_runtime: str = "torch", vision_onnx: Optional[str] = None,
                 onnx_providers: Optional[Sequence[str]] = None) -> None:
        super().__init__(model_id, device, cache_vision, vision_runtime, vision_onnx, onnx_providers)
        self.model, self.processing = load_qwen3vl(model_id, precision, self.device)
        self.max_frames = int(max_frames)
        self.sample_fps = float(sample_fps)
        self.trailing_newline = trailing_newline
        self.digit_ids = [self.processing.token_id(str(k)) for k in SCORES]

    def prompt_text(self, instruction: str) -> str:
        return RUBRIC_PROMPT.format(task=instruction) + ("\n" if self.trailing_newline else "")

    def sequence(self, instruction: str, frames: Sequence[Frame], answer_prefix: str = ANSWER_PREFIX) -> QwenSequence:
        """Video first, then the rubric, one user turn, generation prompt, then the answer prefix."""
        rgbs = [f.rgb for f in frames]
        if len(rgbs) == 1:
            rgbs = rgbs * 2  # Robometer baseline duplicates a one-frame clip
        size = smart_resize(rgbs[0].shape[0], rgbs[0].shape[1], VIDEO_FACTOR, VIDEO_MIN_PIXELS, VIDEO_MAX_PIXELS)
        vision, prompt_blocks, whole = video_blocks(rgbs, size, self.processing.video, range(len(rgbs)),
                                                    self.sample_fps)
        messages = [{"role": "user", "content": [{"type": "video"},
                                                 {"type": "text", "text": self.prompt_text(instruction)}]}]
        text = self.processing.render(messages, add_generation_prompt=True) + answer_prefix
        ids = self.processing.encode(self.processing.expand(text, videos=[prompt_blocks]))
        return QwenSequence(ids, self.processing.mm_token_type_ids(ids), vision, "video", video_source=whole)

    def select(self, frames: Sequence[Frame]) -> List[Frame]:
        check_frames(frames)
        return select_frames(list(frames), self.max_frames, "linspace")

    @torch.inference_mode()
    def digit_logits(self, sequences: Sequence[QwenSequence], use_cache: Optional[bool] = None) -> torch.Tensor:
        use_cache = self.vision_cache.enabled if use_cache is None else use_cache
        inputs = collate(sequences, self.processing.tokenizer.pad_token_id, self.device)
        inputs.update(vision_inputs(self.model.model, sequences, feature_source(self.vision_cache, use_cache),
                                    self.processing.video.merge_size, self.device))
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
    def generate_answer(self, instruction: str, frames: Sequence[Frame], max_new_tokens: int = 16) -> Dict[str, object]:
        """Greedy generation as the reference implementations do; returns the text and parsed score."""
        seq = self.sequence(instruction, self.select(frames), answer_prefix="")
        inputs = collate([seq], self.processing.tokenizer.pad_token_id, self.device)
        inputs.update(vision_inputs(self.model.model, [seq], None, self.processing.video.merge_size, self.device))
        output = self.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
        text = self.processing.tokenizer.decode(output[0, len(seq.input_ids):], skip_special_tokens=True)
        return {"text": text, "score": parse_score_answer(text)}
