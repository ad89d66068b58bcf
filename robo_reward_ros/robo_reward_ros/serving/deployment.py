# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The Ray Serve deployment of ``robo-reward serve``: one backend per replica, requests batched.

HTTP only on what the server was told to bind (127.0.0.1 by default). What one client can take
is bounded (docs/security.md): an API key when one is set, a deadline on reading the body, bytes
and decoded pixels per request, how many decoded requests wait for the model, and how long a
request may wait for it. Every refusal has its status and reason; a model failure's details go
to the server's log, not to the client; the replica stays up.
"""
from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
import time
from typing import Any, List, Optional, Sequence

from ray import serve
from starlette.requests import Request
from starlette.responses import Response

from robo_reward_ros.models.loading.backend_registry import import_plugins
from robo_reward_ros.models.loading.loader import load_reward_model
from robo_reward_ros.models.remote import wire
from robo_reward_ros.serving.batch_scoring import RequestExpired, ScoreRequest, score_requests, server_info

log = logging.getLogger("ray.serve")
# Serve's proxy lets a client lift its request timeout and keep a request running after it hangs up
# with these headers; no robot needs them, so a request carrying one is refused.
CLIENT_OVERRIDE_HEADERS = ("x-request-timeout-seconds", "x-request-disconnect-disabled")


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


def _json(data: Any, status: int = 200, headers: Optional[dict] = None) -> Response:
    """JSON that keeps NaN: a non-finite output reaches the robot, whose pipeline reports it as locally."""
    return Response(json.dumps(data), status_code=status, media_type="application/json", headers=headers)


def _error(status: int, message: str, headers: Optional[dict] = None) -> Response:
    return _json({"error": message}, status, headers)


def authorised(request: Request, api_key: str) -> bool:
    """Check ``Authorization: Bearer <key>`` in constant time; any request passes when no key is set."""
    if not api_key:
        return True
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), api_key.encode())


def parse_body(path: str, body: bytes, reserved_texts, limits: wire.DecodeLimits):
    """Parse the JSON and decode the frames (on a worker thread: the request loop keeps serving)."""
    try:
        data = json.loads(body)
    except RecursionError:  # nesting deep enough to exhaust the parser's stack
        raise wire.WireError("the JSON body is nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, bad UTF-8
        raise wire.WireError(f"the body is not JSON: {exc}") from None
    if path == "/prefer":
        return wire.parse_prefer_request(data, reserved_texts, limits)
    return wire.parse_score_request(data, reserved_texts, limits)


@serve.deployment(name="reward_model")
class RewardServer:
    def __init__(self, backend: str, model: str, precision: str, device: str, plugin_modules: Sequence[str],
                 max_request_bytes: int, max_batch: int, batch_wait_s: float,
                 limits: wire.DecodeLimits = wire.DecodeLimits(), read_timeout_s: float = 10.0,
                 request_timeout_s: float = 30.0, api_key: str = "") -> None:
        import_plugins(list(plugin_modules))
        self.model = load_reward_model(model, backend, precision, device)
        self.max_request_bytes = int(max_request_bytes)
        self.limits = wire.DecodeLimits(*limits)
        self.read_timeout_s = float(read_timeout_s)
        self.request_timeout_s = float(request_timeout_s)
        self._api_key = api_key
        self.reserved_texts = frozenset(self.model.reserved_texts())
        self.info = server_info(self.model, self.max_request_bytes, self.limits)
        self._model_lock = threading.Lock()  # the model is not re-entrant: batches and /prefer take turns
        # Decoded requests waiting for the model: a full batch and the one being decoded.
        self._decoded = asyncio.Semaphore(int(max_batch) + 1)
        self.score_batch.set_max_batch_size(int(max_batch))
        self.score_batch.set_batch_wait_timeout_s(float(batch_wait_s))

    def _score(self, requests) -> List[Any]:
        with self._model_lock:
            return score_requests(self.model, requests)

    def _prefer(self, deadline: float, instruction, clip_a, clip_b) -> float:
        with self._model_lock:
            if time.monotonic() > deadline:
                raise RequestExpired()
            return float(self.model.prefer(instruction, clip_a, clip_b))

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.005)
    async def score_batch(self, requests) -> List[Any]:
        return await asyncio.to_thread(self._score, list(requests))

    async def __call__(self, request: Request) -> Response:
        if not authorised(request, self._api_key):
            return _error(401, "an API key is required (Authorization: Bearer <key>)",
                          {"WWW-Authenticate": "Bearer"})
        path = request.url.path.rstrip("/")
        if request.method == "GET" and path == "/info":
            return _json(self.info)
        if request.method != "POST" or path not in ("/score", "/prefer"):
            return _error(404, "GET /info, POST /score or POST /prefer")
        overrides = [name for name in CLIENT_OVERRIDE_HEADERS if name in request.headers]
        if overrides:
            return _error(400, f"header(s) not accepted: {', '.join(overrides)}")
        deadline = time.monotonic() + self.request_timeout_s
        try:
            body = await asyncio.wait_for(read_bounded(request, self.max_request_bytes), self.read_timeout_s)
        except BodyTooLarge as exc:
            return _error(413, str(exc))
        except asyncio.TimeoutError:
            return _error(408, f"the request body was not received within {self.read_timeout_s:g} s")
        async with self._decoded:
            try:
                parsed = await asyncio.to_thread(parse_body, path, body, self.reserved_texts, self.limits)
            except wire.TooManyPixels as exc:
                return _error(413, str(exc))
            except wire.WireError as exc:
                return _error(400, f"malformed request: {exc}")
            if path == "/prefer":
                return await self._answer_prefer(deadline, parsed)
            answer = await self.score_batch(ScoreRequest(*parsed, deadline))
        return self._answer(answer, {"outputs": answer})

    async def _answer_prefer(self, deadline: float, parsed) -> Response:
        try:
            value = await asyncio.to_thread(self._prefer, deadline, *parsed)
        except NotImplementedError as exc:
            return _error(422, str(exc))
        except Exception as exc:  # noqa: BLE001 - answered below, as /score's are
            return self._answer(exc, None)
        return _json({"preference": value})

    @staticmethod
    def _answer(answer: Any, ok: Any) -> Response:
        if isinstance(answer, RequestExpired):
            return _error(503, f"{answer}; retry later")
        if isinstance(answer, ValueError):  # the model refused the input (check_frames): the client's reason
            return _error(422, f"{type(answer).__name__}: {answer}")
        if isinstance(answer, Exception):
            log.error("the model failed on a request: %s: %s", type(answer).__name__, answer)
            return _error(500, "the model failed on this request (the server's log says why)")
        return _json(ok)
