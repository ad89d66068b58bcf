# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward server's JSON wire format, shared by the server and the node's remote backend.

Frames travel JPEG-compressed (base64) with their stamps; outputs come back per frame as a
local backend gives them. ROS-free and Ray-free: robots without Ray import this.
"""
from __future__ import annotations

import base64
import io
import math
import urllib.parse
from typing import AbstractSet, Any, Dict, List, NamedTuple, Sequence, Tuple

import numpy as np

from robo_reward_ros.core.frame import MAX_FRAMES_PER_CLIP, Frame
from robo_reward_ros.core.image_decoding import ImageDecodeError, decode_compressed, fitted_size
from robo_reward_ros.core.task_spec import InvalidTaskError, check_instruction

DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024
MAX_CLIPS_PER_REQUEST = 8
MAX_PIXELS_PER_FRAME = 16777216  # the largest size a frame may declare: the node's cameras.max_pixels bound
# Decoded size of a frame: the node's default cameras.max_pixels (224 x 224), so a robot's frames
# arrive as it sent them; larger ones are decoded straight to this size (JPEG draft mode).
DEFAULT_MAX_FRAME_PIXELS = 50176
# Decoded pixels one request may hold: eight cameras of a 32-frame window (the node's default).
DEFAULT_MAX_REQUEST_PIXELS = 256 * DEFAULT_MAX_FRAME_PIXELS
# Entropy-coded data takes at least one bit per 8x8 block of the first component: a JPEG that
# declares more pixels than this per byte is truncated or forged (a few hundred bytes claiming
# 4096 x 4096, which the decoder would fill in grey).
MAX_PIXELS_PER_JPEG_BYTE = 8 * 64
JPEG_QUALITY = 90


class WireError(ValueError):
    """A request or response that does not follow the format (the server answers 400)."""


def check_server_url(url: str) -> str:
    """Accept only http://HOST:PORT (no path, credentials or query); return it without a trailing slash."""
    parsed = urllib.parse.urlsplit(str(url).strip())
    if parsed.scheme != "http" or not parsed.hostname or parsed.username or parsed.password:
        raise ValueError(f"a remote model id must be http://HOST:PORT, got {url!r}")
    if parsed.path not in ("", "/") or parsed.query or parsed.fragment:
        raise ValueError(f"a remote model id must be http://HOST:PORT without a path or query, got {url!r}")
    try:
        parsed.port
    except ValueError:
        raise ValueError(f"a remote model id must be http://HOST:PORT with a valid port, got {url!r}") from None
    return f"http://{parsed.netloc}"


def encode_jpeg(rgb: np.ndarray, quality: int = JPEG_QUALITY) -> str:
    from PIL import Image
    buffer = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(buffer, format="JPEG", quality=quality)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


class DecodeLimits(NamedTuple):
    """What a server decodes at most: per frame (larger frames are downscaled) and per request (refused)."""

    frame_pixels: int = DEFAULT_MAX_FRAME_PIXELS
    request_pixels: int = DEFAULT_MAX_REQUEST_PIXELS


class TooManyPixels(WireError):
    """A request that would decode to more pixels than the server holds for one (413)."""


class _EncodedFrame(NamedTuple):
    stamp: float
    data: bytes
    decoded_pixels: int


def _read_jpeg_header(text: str, frame_pixels: int) -> Tuple[bytes, int]:
    """Return the JPEG bytes and the pixels they decode to at most ``frame_pixels``; nothing decoded yet."""
    from PIL import Image
    try:
        data = base64.b64decode(text, validate=True)
        with Image.open(io.BytesIO(data)) as image:
            if image.format != "JPEG":
                raise WireError(f"a frame must be a JPEG, got {image.format}")
            width, height = image.size
    except WireError:
        raise
    except Exception as exc:  # binascii.Error, PIL.UnidentifiedImageError, a cut header
        raise WireError(f"a frame is not a decodable JPEG: {type(exc).__name__}: {exc}") from None
    if width * height > MAX_PIXELS_PER_FRAME:
        raise WireError(f"a frame of {width}x{height} exceeds {MAX_PIXELS_PER_FRAME} pixels")
    if width * height > MAX_PIXELS_PER_JPEG_BYTE * len(data):
        raise WireError(f"a frame declares {width}x{height} pixels, more than its {len(data)} bytes can "
                        "encode: truncated or forged")
    fitted = fitted_size(height, width, frame_pixels) if width * height > frame_pixels else (width, height)
    return data, fitted[0] * fitted[1]


def decode_jpeg(text: str, frame_pixels: int = DEFAULT_MAX_FRAME_PIXELS) -> np.ndarray:
    """Decode one frame to at most ``frame_pixels``; refuses anything but a whole RGB JPEG."""
    data, _ = _read_jpeg_header(text, frame_pixels)
    return _decode(data, frame_pixels)


def _decode(data: bytes, frame_pixels: int) -> np.ndarray:
    try:
        return decode_compressed("jpeg", data, max_pixels=frame_pixels)
    except ImageDecodeError as exc:
        raise WireError(f"a frame is not a decodable JPEG: {exc}") from None


def encode_clip(frames: Sequence[Frame], quality: int = JPEG_QUALITY) -> List[Dict[str, Any]]:
    return [{"stamp": float(f.stamp), "jpeg": encode_jpeg(f.rgb, quality)} for f in frames]


def _read_clip(items: Any, frame_pixels: int) -> List[_EncodedFrame]:
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_FRAMES_PER_CLIP:
        raise WireError(f"a clip must be a list of 1..{MAX_FRAMES_PER_CLIP} frames")
    frames = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("jpeg"), str):
            raise WireError("a frame must be {'stamp': number, 'jpeg': base64 string}")
        stamp = item.get("stamp")
        if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) or not math.isfinite(stamp):
            raise WireError("a frame's stamp must be a finite number")
        frames.append(_EncodedFrame(float(stamp), *_read_jpeg_header(item["jpeg"], frame_pixels)))
    return frames


def _decode_clips(clips: Sequence[Any], limits: DecodeLimits) -> List[List[Frame]]:
    """Check every frame's header and the request's pixel total, then decode (nothing big before)."""
    encoded = [_read_clip(clip, limits.frame_pixels) for clip in clips]
    total = sum(frame.decoded_pixels for clip in encoded for frame in clip)
    if total > limits.request_pixels:
        raise TooManyPixels(f"the request decodes to {total} pixels, over the server's {limits.request_pixels} "
                            "(fewer frames or cameras per request)")
    return [[Frame(f.stamp, _decode(f.data, limits.frame_pixels)) for f in clip] for clip in encoded]


def _instruction(body: Dict[str, Any], reserved_texts: AbstractSet[str]) -> str:
    try:
        return check_instruction(body.get("instruction"), reserved_texts, "the request")
    except InvalidTaskError as exc:
        raise WireError(str(exc)) from None


def parse_score_request(body: Any, reserved_texts: AbstractSet[str] = frozenset(),
                        limits: DecodeLimits = DecodeLimits()) -> Tuple[str, List[List[Frame]]]:
    """``{"instruction": str, "clips": [[frame, ...], ...]}`` -> instruction and decoded clips.

    The instruction is checked as the node checks a task's (the same reserved texts refused).
    """
    if not isinstance(body, dict):
        raise WireError("the request body must be a JSON object")
    clips = body.get("clips")
    if not isinstance(clips, list) or not 1 <= len(clips) <= MAX_CLIPS_PER_REQUEST:
        raise WireError(f"'clips' must be a list of 1..{MAX_CLIPS_PER_REQUEST} clips")
    return _instruction(body, reserved_texts), _decode_clips(clips, limits)


def parse_prefer_request(body: Any, reserved_texts: AbstractSet[str] = frozenset(),
                         limits: DecodeLimits = DecodeLimits()) -> Tuple[str, List[Frame], List[Frame]]:
    if not isinstance(body, dict):
        raise WireError("the request body must be a JSON object")
    instruction = _instruction(body, reserved_texts)
    clip_a, clip_b = _decode_clips([body.get("clip_a"), body.get("clip_b")], limits)
    return instruction, clip_a, clip_b


def _numbers(values: Any) -> List[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def output_to_json(output) -> Dict[str, Any]:
    """Write a ModelOutput as JSON; extras keep only plain numbers and strings."""
    extras = {k: v for k, v in output.extras.items() if isinstance(v, (int, float, str)) and not isinstance(v, bool)}
    return {"progress": _numbers(output.progress), "stamps": _numbers(output.stamps),
            "success": None if output.success is None else _numbers(output.success),
            "input_stamps": None if output.input_stamps is None else _numbers(output.input_stamps),
            "backend": str(output.backend), "extras": extras}


def output_from_json(data: Any, sent_stamps: Sequence[float]):
    """Check a server's answer for one clip and rebuild the ModelOutput; WireError when it is garbage."""
    from robo_reward_ros.models.reward_model import ModelOutput
    if not isinstance(data, dict):
        raise WireError(f"an output must be a JSON object, got {type(data).__name__}")
    try:
        progress = np.asarray(data["progress"], dtype=np.float64)
        stamps = np.asarray(data["stamps"], dtype=np.float64)
        success = None if data.get("success") is None else np.asarray(data["success"], dtype=np.float64)
        output = ModelOutput(progress=progress, stamps=stamps, backend=str(data.get("backend", "remote")),
                             success=success, input_stamps=data.get("input_stamps"),
                             extras=dict(data.get("extras") or {}))
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"malformed output: {type(exc).__name__}: {exc}") from None
    if output.progress.ndim != 1 or len(output.progress) == 0:
        raise WireError("an output must hold at least one progress value")
    if not set(output.stamps.tolist()) <= set(float(s) for s in sent_stamps):
        raise WireError("the output names frames that were not sent")
    return output
