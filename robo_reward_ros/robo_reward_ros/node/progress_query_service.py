# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``~/query_progress``: score the current window now, for reasoners and operator tools.

It runs in its own callback group, on an executor thread of its own, so frames, timers and the
other services go on while the model scores; the model lock keeps it from running while the
inference thread scores. The answer feeds no decision (see RewardPipeline.query_now).
"""
from __future__ import annotations

import threading

from robo_reward_ros.core.reward_pipeline import finite_or_nan
from robo_reward_ros.node.stamps import to_time


class ProgressQueryService:
    def __init__(self, pipeline, model_lock: threading.Lock) -> None:
        self._pipeline = pipeline
        self._model_lock = model_lock

    def handle(self, request, response):
        try:
            with self._model_lock:
                query = self._pipeline.query_now()
        except Exception as exc:  # no episode, no frame yet, the model failed: say which
            response.success = False
            response.message = str(exc) if isinstance(exc, RuntimeError) else \
                f"{type(exc).__name__}: {exc}"
            return response
        state = query.state
        response.success, response.message = True, "scored now"
        response.episode_id = state.episode_id
        response.stage_index = state.stage_index
        response.stage_count = state.num_stages
        response.instruction = state.instruction
        response.progress = float(query.progress)
        response.has_success_probability = query.success_prob is not None
        response.success_probability = finite_or_nan(query.success_prob)
        response.stamp = to_time(query.stamp)
        response.trend_per_sec = float(query.trend_per_sec)
        response.stalled = query.stalled
        return response
