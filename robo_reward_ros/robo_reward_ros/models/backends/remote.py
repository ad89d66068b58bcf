# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The ``remote`` backend: score through a shared ``robo-reward serve`` server over HTTP.

Robots without a GPU (or without Ray, torch or the weights) use it: frames go JPEG-compressed,
per-frame outputs come back as the server's local backend gives them. Standard library HTTP only.
Any failure (server down, too slow, an answer that is not one) raises RemoteModelError, which the
node's reward pipeline treats as any model failure: back off, one model-error event, resume.

A request talks to the configured server only: ``http.client`` directly, so no proxy from the
environment and no redirect is followed (a 3xx is an error). ``timeout_sec`` bounds the whole
request, connect to last byte: a server that trickles its answer must not hold a step (and the
model lock) for one timeout per byte.
"""
from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.parse
from typing import Any, Dict, FrozenSet, List, Optional, Sequence

from robo_reward_ros.core.image_decoding import fit_pixels
from robo_reward_ros.models.reward_model import Capabilities, Frame, ModelOutput, RewardModel, check_frames
from robo_reward_ros.models.remote import wire
from robo_reward_ros.models.remote.api_key import KEY_FILE_ENV, ApiKeyError, read_api_key

DEFAULT_TIMEOUT_SEC = 10.0
# After a transport failure (refused, timed out), calls fail at once for this long: the pipeline's
# frame-by-frame search for a failing frame must not wait one timeout per frame for a dead server.
UNAVAILABLE_HOLD_SEC = 0.25


class RemoteModelError(RuntimeError):
    """The reward server could not give an answer for this query."""


class RemoteRewardModel(RewardModel):
    name = "remote"
    batches_clips = True  # every camera's window in one request

    def __init__(self, url: str, precision: str = "bf16", device: str = "auto",
                 timeout_sec: float = DEFAULT_TIMEOUT_SEC, jpeg_quality: int = wire.JPEG_QUALITY,
                 max_request_bytes: int = wire.DEFAULT_MAX_REQUEST_BYTES) -> None:
        """``precision`` and ``device`` are the server's business (its command line); accepted and unused here.

        The server must answer ``/info`` now: what it hosts decides the window size the node needs
        and the instructions it must refuse.
        """
        self.url = wire.check_server_url(url)
        self.timeout_sec = float(timeout_sec)
        self.jpeg_quality = int(jpeg_quality)
        self.max_request_bytes = int(max_request_bytes)
        self._unavailable_until = 0.0
        try:
            self._api_key = read_api_key()  # the server's, from the environment: never a ROS parameter
        except ApiKeyError as exc:
            raise RemoteModelError(str(exc)) from None
        try:
            info = self._request("GET", "/info")
        except RemoteModelError as exc:
            raise RemoteModelError(f"reward server {self.url} did not describe its model: {exc}") from None
        try:
            self.server_backend = str(info["backend"])
            self.capabilities = Capabilities(**{k: bool(v) for k, v in info["capabilities"].items()})
            self.max_frames = int(info["max_frames"]) if info.get("max_frames") else None
            self._reserved = frozenset(str(t) for t in info.get("reserved_texts", ()))
            ratio = info.get("max_aspect_ratio")
            self.max_aspect_ratio = None if ratio is None else float(ratio)
            limit = int(info.get("max_request_bytes", self.max_request_bytes))
            self.max_request_bytes = min(self.max_request_bytes, limit)
            self.normaliser = _normaliser(info.get("normaliser"))
            # Frames go at the size the server decodes them to: the same pixels, fewer bytes.
            self.max_frame_pixels = int(info.get("max_frame_pixels") or 0) or None
            self.max_request_pixels = int(info.get("max_request_pixels") or 0) or None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RemoteModelError(f"reward server {self.url} sent an unusable /info: {exc!r}") from None
        self.name = f"remote:{self.server_backend}"

    # -- HTTP ------------------------------------------------------------------------------------
    def _request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        if time.monotonic() < self._unavailable_until:
            raise RemoteModelError(f"reward server {self.url} unavailable (last attempt just failed)")
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            if len(data) > self.max_request_bytes:
                raise RemoteModelError(f"request of {len(data)} bytes exceeds the {self.max_request_bytes}-byte "
                                       "limit (fewer or smaller frames: cameras.max_pixels, window.max_frames)")
        address = urllib.parse.urlsplit(self.url)
        connection = _DeadlineConnection(address.hostname, address.port, time.monotonic() + self.timeout_sec)
        response = None
        try:
            headers = {"Content-Type": "application/json", "Connection": "close"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            if 300 <= response.status < 400:
                raise RemoteModelError(f"reward server {self.url} answered {response.status} (a redirect, to "
                                       f"{response.getheader('Location', '?')!r}): redirects are not followed")
            if not 200 <= response.status < 300:  # the server answered, with a refusal
                detail = response.read(2000).decode("utf-8", "replace")
                hint = f" (set {KEY_FILE_ENV} to the server's key file)" if response.status == 401 else ""
                raise RemoteModelError(f"reward server {self.url} answered {response.status}: {detail}{hint}")
            raw = response.read(self.max_request_bytes + 1)
        except (OSError, ValueError, http.client.HTTPException) as exc:  # refused, reset, timed out, bad status
            self._unavailable_until = time.monotonic() + UNAVAILABLE_HOLD_SEC
            raise RemoteModelError(f"reward server {self.url} unreachable: {type(exc).__name__}: {exc}") from None
        finally:
            if response is not None:
                response.close()
            connection.close()
        try:
            return json.loads(raw)
        except ValueError:
            raise RemoteModelError(f"reward server {self.url} sent an answer that is not JSON") from None

    # -- RewardModel ------------------------------------------------------------------------------
    def score(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        return self.score_batch(instruction, [frames])[0]

    def score_batch(self, instruction: str, clips: Sequence[Sequence[Frame]]) -> List[ModelOutput]:
        """Every camera's window in one request (the server batches them with other robots')."""
        for clip in clips:
            check_frames(clip)
        body = {"instruction": instruction, "clips": self._encode(clips)}
        answer = self._request("POST", "/score", body)
        outputs = answer.get("outputs") if isinstance(answer, dict) else None
        if not isinstance(outputs, list) or len(outputs) != len(clips):
            raise RemoteModelError(f"reward server {self.url} answered {len(clips)} clip(s) with something "
                                   "else than one output each")
        try:
            results = [wire.output_from_json(data, [f.stamp for f in clip]) for data, clip in zip(outputs, clips)]
        except wire.WireError as exc:
            raise RemoteModelError(f"reward server {self.url}: {exc}") from None
        for result in results:
            result.backend = self.name  # records say the numbers came through the server
        if self.normaliser is not None:  # per-robot episode state stays on the robot
            for result in results:
                result.progress[:] = [self.normaliser.update(float(v)) for v in result.progress]
        return results

    def prefer(self, instruction: str, clip_a: Sequence[Frame], clip_b: Sequence[Frame]) -> float:
        if not self.capabilities.preference:
            raise NotImplementedError(f"{self.name} does not compare two clips")
        check_frames(clip_a)
        check_frames(clip_b)
        encoded_a, encoded_b = self._encode([clip_a, clip_b])
        answer = self._request("POST", "/prefer", {"instruction": instruction, "clip_a": encoded_a,
                                                   "clip_b": encoded_b})
        value = answer.get("preference") if isinstance(answer, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise RemoteModelError(f"reward server {self.url} sent no preference in [0, 1]")
        return float(value)

    def reserved_texts(self) -> FrozenSet[str]:
        return self._reserved

    def _encode(self, clips: Sequence[Sequence[Frame]]) -> List[List[Dict[str, Any]]]:
        """JPEG clips at the server's frame size, refused here when the server would refuse them (413)."""
        if self.max_frame_pixels:
            clips = [[Frame(f.stamp, fit_pixels(f.rgb, self.max_frame_pixels)) for f in clip] for clip in clips]
        pixels = sum(f.rgb.shape[0] * f.rgb.shape[1] for clip in clips for f in clip)
        if self.max_request_pixels and pixels > self.max_request_pixels:
            raise RemoteModelError(f"a request of {pixels} pixels exceeds the server's {self.max_request_pixels} "
                                   "(fewer frames or cameras: window.max_frames, cameras.topics)")
        return [wire.encode_clip(clip, self.jpeg_quality) for clip in clips]

    def reset(self) -> None:
        if self.normaliser is not None:
            self.normaliser.reset()


class _DeadlineSocket(socket.socket):
    """A socket whose every send and receive gets only the time left until the request's deadline."""

    deadline = 0.0

    def _time_left(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out (the whole request)")
        self.settimeout(left)

    def recv_into(self, *args, **kwargs):  # what http.client's reads come down to
        self._time_left()
        return super().recv_into(*args, **kwargs)

    def recv(self, *args, **kwargs):
        self._time_left()
        return super().recv(*args, **kwargs)

    def sendall(self, *args, **kwargs):  # with a timeout, one bound for all of it
        self._time_left()
        return super().sendall(*args, **kwargs)


class _DeadlineConnection(http.client.HTTPConnection):
    """HTTP to one server with one deadline for the whole request (``timeout`` alone is per socket read)."""

    def __init__(self, host: str, port: Optional[int], deadline: float) -> None:
        super().__init__(host, port)
        self._deadline = deadline

    def connect(self) -> None:
        self.timeout = max(self._deadline - time.monotonic(), 1e-3)
        super().connect()
        plain = self.sock
        self.sock = _DeadlineSocket(plain.family, plain.type, plain.proto, fileno=plain.detach())
        self.sock.deadline = self._deadline


def _normaliser(spec: Any):
    """Run TOPReward's causal normaliser here, per robot: the server returns raw log P(True)."""
    if spec is None:
        return None
    from robo_reward_ros.models.backends.topreward_normalization import CausalMinMax
    return CausalMinMax(min_span=float(spec["min_span"]),
                        ceiling=None if spec.get("ceiling") is None else float(spec["ceiling"]))
