"""The reward server's JSON wire format, shared by the server and the node's remote backend.

Frames travel JPEG-compressed (base64) with their stamps; outputs come back per frame as a
local backend gives them. ROS-free and Ray-free: robots without Ray import this.
"""
from __future__ import annotations

import base64
import io
import math
import urllib.parse
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from robo_reward_ros.core.frame import Frame

DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024
MAX_FRAMES_PER_CLIP = 64
MAX_CLIPS_PER_REQUEST = 8
MAX_PIXELS_PER_FRAME = 16777216  # the node's cameras.max_pixels upper bound
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


def decode_jpeg(text: str) -> np.ndarray:
    """Decode one frame; refuses anything but a bounded RGB JPEG."""
    from PIL import Image
    try:
        data = base64.b64decode(text, validate=True)
        with Image.open(io.BytesIO(data)) as image:
            if image.format != "JPEG":
                raise WireError(f"a frame must be a JPEG, got {image.format}")
            if image.width * image.height > MAX_PIXELS_PER_FRAME:
                raise WireError(f"a frame of {image.width}x{image.height} exceeds {MAX_PIXELS_PER_FRAME} pixels")
            return np.asarray(image.convert("RGB"), dtype=np.uint8)
    except WireError:
        raise
    except Exception as exc:  # binascii.Error, PIL.UnidentifiedImageError, truncated data
        raise WireError(f"a frame is not a decodable JPEG: {type(exc).__name__}: {exc}") from None


def encode_clip(frames: Sequence[Frame], quality: int = JPEG_QUALITY) -> List[Dict[str, Any]]:
    return [{"stamp": float(f.stamp), "jpeg": encode_jpeg(f.rgb, quality)} for f in frames]


def decode_clip(items: Any) -> List[Frame]:
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_FRAMES_PER_CLIP:
        raise WireError(f"a clip must be a list of 1..{MAX_FRAMES_PER_CLIP} frames")
    frames = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("jpeg"), str):
            raise WireError("a frame must be {'stamp': number, 'jpeg': base64 string}")
        stamp = item.get("stamp")
        if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) or not math.isfinite(stamp):
            raise WireError("a frame's stamp must be a finite number")
        frames.append(Frame(stamp=float(stamp), rgb=decode_jpeg(item["jpeg"])))
    return frames


def _instruction(body: Dict[str, Any]) -> str:
    instruction = body.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip() or len(instruction) > 4096:
        raise WireError("'instruction' must be a non-empty string of at most 4096 characters")
    return instruction


def parse_score_request(body: Any) -> Tuple[str, List[List[Frame]]]:
    """``{"instruction": str, "clips": [[frame, ...], ...]}`` -> instruction and decoded clips."""
    if not isinstance(body, dict):
        raise WireError("the request body must be a JSON object")
    clips = body.get("clips")
    if not isinstance(clips, list) or not 1 <= len(clips) <= MAX_CLIPS_PER_REQUEST:
        raise WireError(f"'clips' must be a list of 1..{MAX_CLIPS_PER_REQUEST} clips")
    return _instruction(body), [decode_clip(clip) for clip in clips]


def parse_prefer_request(body: Any) -> Tuple[str, List[Frame], List[Frame]]:
    if not isinstance(body, dict):
        raise WireError("the request body must be a JSON object")
    return _instruction(body), decode_clip(body.get("clip_a")), decode_clip(body.get("clip_b"))


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
