# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``~/compare_preference``: which of two clips makes more progress on an instruction.

The comparison runs on its own thread and the service callback awaits it, so the executor keeps
serving frames meanwhile; the model lock keeps it from running while the inference thread scores.
"""
from __future__ import annotations

import threading
from typing import Callable

from rclpy.task import Future as RclpyFuture

from robo_reward_ros.core.frame import MAX_FRAMES_PER_CLIP, Frame
from robo_reward_ros.core.image_decoding import ImageDecodeError, decode_raw, fit_pixels
from robo_reward_ros.core.task_spec import InvalidTaskError, check_instruction
from robo_reward_ros.core.stamps import to_seconds


class PreferenceService:
    def __init__(self, node, model, model_lock: threading.Lock, model_id: str,
                 max_pixels: int) -> None:
        self._node = node
        self._model = model
        self._model_lock = model_lock
        self._model_id = model_id
        self._max_pixels = max_pixels

    async def handle(self, request, response):
        if not self._model.capabilities.preference:
            response.success = False
            response.message = f"backend {self._model.name} has no preference head"
            return response
        try:
            # The checks set_task makes, so this is no way round them.
            instruction = check_instruction(request.instruction, self._model.reserved_texts(),
                                            "the query")
            for name, clip in (("trajectory_a", request.trajectory_a), ("trajectory_b", request.trajectory_b)):
                if not clip:
                    raise ImageDecodeError(f"{name} is empty: a clip needs at least one frame")
                if len(clip) > MAX_FRAMES_PER_CLIP:
                    raise ImageDecodeError(f"{name} has {len(clip)} frames; at most {MAX_FRAMES_PER_CLIP} are accepted")
            clips = [[self._decode(image, i) for i, image in enumerate(clip)]
                     for clip in (request.trajectory_a, request.trajectory_b)]
        except (ImageDecodeError, InvalidTaskError) as exc:
            response.success, response.message = False, str(exc)
            return response
        outcome = await self._off_executor(lambda: self._model.prefer(instruction, *clips))
        if isinstance(outcome, Exception):
            response.success = False
            response.message = f"{type(outcome).__name__}: {outcome}"
            return response
        response.success, response.message = True, "compared"
        response.probability_a_better = float(outcome)
        response.a_preferred = outcome > 0.5
        response.backend = self._model.name
        response.model_id = self._model_id
        return response

    def _off_executor(self, compare: Callable[[], float]) -> RclpyFuture:
        """Return a future the executor resolves when ``compare`` finishes (its result or exception)."""
        answer = RclpyFuture(executor=self._node.executor)

        def run() -> None:
            try:
                with self._model_lock:
                    answer.set_result(compare())
            except Exception as exc:
                answer.set_result(exc)

        threading.Thread(target=run, name="preference", daemon=True).start()
        return answer

    def _decode(self, image, index: int) -> Frame:
        rgb = decode_raw(image.encoding, image.height, image.width, image.step, image.data)
        stamp = to_seconds(image.header.stamp)
        return Frame(stamp if stamp > 0.0 else float(index), fit_pixels(rgb, self._max_pixels))
