"""The Ray Serve deployment of ``robo-reward serve``: one backend per replica, requests batched.

HTTP only on what the server was told to bind (127.0.0.1 by default). Bodies are read up to a
byte limit; an oversized body gets 413, a malformed one 400, and the replica stays up.
"""
from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, List, Sequence

from ray import serve
from starlette.requests import Request
from starlette.responses import Response

from robo_reward_ros.models.loading.backend_registry import create_reward_model, import_plugins
from robo_reward_ros.serving import wire
from robo_reward_ros.serving.batch_scoring import score_requests, server_info


class BodyTooLarge(Exception):
    pass


async def read_bounded(request: Request, limit: int) -> bytes:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise BodyTooLarge(f"request body of {length} bytes exceeds the {limit}-byte limit")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(f"request body exceeds the {limit}-byte limit")
    return bytes(body)


def _json(data: Any, status: int = 200) -> Response:
    """JSON that keeps NaN: a non-finite output reaches the robot, whose pipeline reports it as locally."""
    return Response(json.dumps(data), status_code=status, media_type="application/json")


def _error(status: int, message: str) -> Response:
    return _json({"error": message}, status)


@serve.deployment(name="reward_model")
class RewardServer:
    def __init__(self, backend: str, model: str, precision: str, device: str, plugin_modules: Sequence[str],
                 max_request_bytes: int, max_batch: int, batch_wait_s: float) -> None:
        import_plugins(list(plugin_modules))
        self.model = create_reward_model(model, backend, precision, device)
        self.max_request_bytes = int(max_request_bytes)
        self.info = server_info(self.model, self.max_request_bytes)
        self._model_lock = threading.Lock()  # the model is not re-entrant: batches and /prefer take turns
        self.score_batch.set_max_batch_size(int(max_batch))
        self.score_batch.set_batch_wait_timeout_s(float(batch_wait_s))

    def _score(self, requests) -> List[Any]:
        with self._model_lock:
            return score_requests(self.model, requests)

    def _prefer(self, instruction, clip_a, clip_b) -> float:
        with self._model_lock:
            return float(self.model.prefer(instruction, clip_a, clip_b))

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.005)
    async def score_batch(self, requests) -> List[Any]:
        return await asyncio.to_thread(self._score, list(requests))

    async def __call__(self, request: Request) -> Response:
        path = request.url.path.rstrip("/")
        if request.method == "GET" and path == "/info":
            return _json(self.info)
        if request.method != "POST" or path not in ("/score", "/prefer"):
            return _error(404, "GET /info, POST /score or POST /prefer")
        try:
            body = await read_bounded(request, self.max_request_bytes)
        except BodyTooLarge as exc:
            return _error(413, str(exc))
        try:
            data = json.loads(body)
            if path == "/prefer":
                parsed_pair = wire.parse_prefer_request(data)
            else:
                parsed = wire.parse_score_request(data)
        except (ValueError, wire.WireError) as exc:  # json.JSONDecodeError is a ValueError
            return _error(400, f"malformed request: {exc}")
        if path == "/prefer":
            try:
                value = await asyncio.to_thread(self._prefer, *parsed_pair)
            except NotImplementedError as exc:
                return _error(422, str(exc))
            except Exception as exc:  # noqa: BLE001 - the robot's model-error path reports it
                return _error(500, f"{type(exc).__name__}: {exc}")
            return _json({"preference": value})
        answer = await self.score_batch(parsed)
        if isinstance(answer, ValueError):  # the model refused the input (check_frames)
            return _error(422, f"{type(answer).__name__}: {answer}")
        if isinstance(answer, Exception):
            return _error(500, f"{type(answer).__name__}: {answer}")
        return _json({"outputs": answer})
