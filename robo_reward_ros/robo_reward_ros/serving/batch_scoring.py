# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What a server replica does with a batch of score requests, Ray-free (so it is tested without Ray).

Robometer puts every robot's windows into one forward (``score_items``); other backends score
them one by one. A batch that fails is retried request by request, so one robot's bad window
fails only its own request. TOPReward answers its raw log P(True): the causal normaliser is
per-episode state and runs on each robot (models/backends/remote.py).
"""
from __future__ import annotations

import math
import time
from typing import Any, Dict, List, NamedTuple, Sequence, Tuple, Union

from robo_reward_ros.models.backends.frame_selection import tail_indices
from robo_reward_ros.models.reward_model import Frame, ModelOutput
from robo_reward_ros.models.remote import wire


class ScoreRequest(NamedTuple):
    instruction: str
    clips: List[List[Frame]]
    deadline: float = math.inf  # time.monotonic() after which nobody waits for the answer


class RequestExpired(RuntimeError):
    """A request that waited past its deadline: it is not scored (it would hold the model for nobody)."""

    def __init__(self, message: str = "the request waited longer than its deadline for the model") -> None:
        super().__init__(message)


Request = Union[ScoreRequest, Tuple[str, List[List[Frame]]]]
Answer = Union[List[Dict[str, Any]], Exception]


def server_info(model, max_request_bytes: int, limits: wire.DecodeLimits = wire.DecodeLimits()) -> Dict[str, Any]:
    """Describe what a remote client needs to behave as the local backend would."""
    caps = model.capabilities
    normaliser = getattr(model, "normaliser", None) if _raw_topreward(model) else None
    return {"backend": model.name,
            "capabilities": {"progress": caps.progress, "success": caps.success, "preference": caps.preference},
            "max_frames": model.max_frames,
            "reserved_texts": sorted(model.reserved_texts()),
            "max_aspect_ratio": model.max_aspect_ratio,
            "max_request_bytes": max_request_bytes,
            "max_frame_pixels": limits.frame_pixels, "max_request_pixels": limits.request_pixels,
            "normaliser": None if normaliser is None else {"min_span": normaliser.min_span,
                                                           "ceiling": normaliser.ceiling}}


def _raw_topreward(model) -> bool:
    return getattr(model, "name", "") == "topreward" and hasattr(model, "log_probs")


def _score_one(model, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
    if _raw_topreward(model):
        window = [frames[i] for i in tail_indices(len(frames), model.max_frames)]
        log_true, log_false = model.log_probs(instruction, window)
        return ModelOutput(progress=[log_true], stamps=[window[-1].stamp], backend=model.name,
                           input_stamps=[f.stamp for f in window],
                           extras={"log_prob_true": log_true, "log_prob_false": log_false})
    return model.score(instruction, frames)


def _score_request(model, request: ScoreRequest) -> List[Dict[str, Any]]:
    instruction, clips, _ = request
    if hasattr(model, "score_items"):
        outputs = model.score_items([(instruction, clip) for clip in clips])
    else:
        outputs = [_score_one(model, instruction, clip) for clip in clips]
    return [wire.output_to_json(output) for output in outputs]


def score_requests(model, requests: Sequence[Request]) -> List[Answer]:
    """One answer per request: its outputs, or the exception that request alone raised."""
    answers: List[Answer] = [None] * len(requests)
    now = time.monotonic()
    live = []
    for index, request in enumerate(ScoreRequest(*request) for request in requests):
        if now > request.deadline:
            answers[index] = RequestExpired()
        else:
            live.append((index, request))
    for index, answer in zip([i for i, _ in live], _score_live(model, [r for _, r in live])):
        answers[index] = answer
    return answers


def _score_live(model, requests: Sequence[ScoreRequest]) -> List[Answer]:
    if len(requests) > 1 and hasattr(model, "score_items"):
        items = [(instruction, clip) for instruction, clips, _ in requests for clip in clips]
        try:
            outputs = [wire.output_to_json(o) for o in model.score_items(items)]
        except Exception:  # noqa: BLE001 - find out whose request it was, below
            pass
        else:
            answers: List[Answer] = []
            for _, clips, _ in requests:
                answers.append(outputs[:len(clips)])
                outputs = outputs[len(clips):]
            return answers
    answers = []
    for request in requests:
        try:
            answers.append(_score_request(model, request))
        except Exception as exc:  # noqa: BLE001 - reported to that request's client
            answers.append(exc)
    return answers
