# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Camera messages to RGB arrays, from their raw fields (so the core needs no ROS types).

Raw images are viewed, not copied, where the layout allows; every refusal says exactly what
is wrong with the frame, because a robot's camera driver misconfiguration shows up here first.
"""
from __future__ import annotations

import io
from typing import Optional, Tuple

import numpy as np

# encoding -> (channels, channel order to reach RGB)
RAW_ENCODINGS = {
    "rgb8": (3, (0, 1, 2)),
    "bgr8": (3, (2, 1, 0)),
    "rgba8": (4, (0, 1, 2)),
    "bgra8": (4, (2, 1, 0)),
    "mono8": (1, None),
}
COMPRESSED_FORMATS = ("jpeg", "png")
# Pillow modes of 16-bit and float images: its RGB conversion clips them (an all-white frame), so
# they are refused as the raw 16-bit encodings are.
_WIDE_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")
# Larger frames than this are refused before any copy: no camera a reward model needs sends
# them, and a corrupt header must not make the node allocate gigabytes.
MAX_PIXELS = 4096 * 4096


class ImageDecodeError(ValueError):
    """The frame cannot be used; the message says why."""


def decode_raw(encoding: str, height: int, width: int, step: int, data,
               max_pixels: Optional[int] = None) -> np.ndarray:
    """RGB uint8 (height, width, 3) from a sensor_msgs/Image's fields.

    With ``max_pixels``, the result is also ``fit_pixels(result, max_pixels)``, computed the cheap
    way round: the frame is downscaled in its own channel order and only the small result is
    reordered (area resampling treats channels independently, so the pixels are the same). An
    rgb8 frame without row padding is returned as a view of ``data`` when it needs no resizing.
    """
    if encoding not in RAW_ENCODINGS:
        raise ImageDecodeError(
            f"unsupported encoding '{encoding}' (supported: {', '.join(RAW_ENCODINGS)})")
    channels, order = RAW_ENCODINGS[encoding]
    if width <= 0 or height <= 0:
        raise ImageDecodeError(f"empty image {width}x{height}")
    if width * height > MAX_PIXELS:
        raise ImageDecodeError(f"image {width}x{height} exceeds the {MAX_PIXELS}-pixel limit")
    if step < width * channels:
        raise ImageDecodeError(f"step {step} < width {width} x {channels} channel(s)")
    buffer = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    if buffer.size != step * height:
        raise ImageDecodeError(
            f"data has {buffer.size} bytes, expected step x height = {step}x{height} = {step * height}")
    pixels = buffer.reshape(height, step)[:, :width * channels].reshape(height, width, channels)
    if max_pixels is not None and height * width > max_pixels:
        if order is None:  # mono: downscale one channel, then replicate
            small = _resize_box(np.ascontiguousarray(pixels[:, :, 0]), max_pixels)
            return np.repeat(small[:, :, None], 3, axis=2)
        small = _resize_box(np.ascontiguousarray(pixels[:, :, :3]), max_pixels)  # drops alpha
        return small if order == (0, 1, 2) else np.ascontiguousarray(small[:, :, ::-1])
    if order is None:
        return np.repeat(pixels, 3, axis=2)
    if order == (0, 1, 2):
        return pixels if channels == 3 else np.ascontiguousarray(pixels[:, :, :3])
    return np.ascontiguousarray(pixels[:, :, 2::-1])


def decode_compressed(format_field: str, data, max_pixels: Optional[int] = None) -> np.ndarray:
    """RGB uint8 from a sensor_msgs/CompressedImage (format "jpeg", "png", or "rgb8; jpeg ...").

    With ``max_pixels``, the result has the size ``fit_pixels`` gives, resized before it leaves
    Pillow (no full-size array is made); a JPEG is decoded at a reduced scale first (Pillow's
    draft mode: the decoder itself skips the detail), so a 4096x4096 frame never exists in memory
    at full size. Every refusal, whatever Pillow raised, is an ImageDecodeError with the reason.
    """
    from PIL import Image, UnidentifiedImageError  # only compressed streams need Pillow

    kind = compressed_kind(format_field)
    encoding = format_field.split(";", 1)[0].strip() if ";" in format_field else ""
    if encoding and ("16" in encoding or "32" in encoding or "64" in encoding):
        raise ImageDecodeError(
            f"unsupported encoding '{encoding}' (16-bit or wider, compressed as raw; supported: "
            f"{', '.join(RAW_ENCODINGS)})")
    raw = data if isinstance(data, (bytes, bytearray)) else bytes(data)
    if not raw:
        raise ImageDecodeError(f"empty {kind} data (0 bytes)")
    try:
        with Image.open(io.BytesIO(raw)) as image:
            if image.format is None or image.format.lower() != kind:
                raise ImageDecodeError(
                    f"format field says {kind} but the data is {image.format or 'unknown'}")
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise ImageDecodeError(f"image {width}x{height} exceeds the {MAX_PIXELS}-pixel limit")
            if image.mode in _WIDE_MODES:
                raise ImageDecodeError(f"{kind} holds a 16-bit or float image (mode {image.mode}); "
                                       f"unsupported, as raw 16-bit encodings are (supported: "
                                       f"{', '.join(RAW_ENCODINGS)})")
            fitted = (fitted_size(height, width, max_pixels)
                      if max_pixels is not None and width * height > max_pixels else None)
            if fitted is not None and kind == "jpeg":
                image.draft("RGB", fitted)  # decode at 1/2, 1/4 or 1/8 scale, at least ``fitted``
            rgb = image.convert("RGB") if image.mode != "RGB" else image
            if fitted is not None and rgb.size != fitted:
                rgb = rgb.resize(fitted, Image.BOX)
            return np.asarray(rgb)
    except ImageDecodeError:
        raise
    except Image.DecompressionBombError as exc:  # declares a size far over Pillow's own limit
        raise ImageDecodeError(f"{kind} declares an image over the {MAX_PIXELS}-pixel limit "
                               f"({exc})") from exc
    except UnidentifiedImageError as exc:
        raise ImageDecodeError(f"corrupt or truncated {kind} data: no image format recognises "
                               f"its {len(raw)} bytes") from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ImageDecodeError(f"corrupt or truncated {kind} data: {exc}") from exc


def compressed_kind(format_field: str) -> str:
    """Return the codec named by a CompressedImage format field.

    image_transport writes e.g. "bgr8; jpeg compressed bgr8".
    """
    text = format_field.lower()
    for kind, names in (("jpeg", ("jpeg", "jpg")), ("png", ("png",))):
        if any(name in text for name in names):
            return kind
    raise ImageDecodeError(
        f"unknown compression format '{format_field}' (supported: {', '.join(COMPRESSED_FORMATS)})")


def fit_pixels(rgb: np.ndarray, max_pixels: int) -> np.ndarray:
    """Downscale (aspect kept, area resampling) so the frame has at most ``max_pixels`` pixels.

    Smaller frames are returned as they are. Applied on arrival, it bounds the window's memory and
    the model's input size whatever the camera resolution.
    """
    height, width = rgb.shape[:2]
    if height * width <= max_pixels:
        return rgb
    return _resize_box(np.ascontiguousarray(rgb), max_pixels)


def fitted_size(height: int, width: int, max_pixels: int) -> Tuple[int, int]:
    """(width, height) of the downscaled frame, as PIL's resize takes it."""
    scale = (max_pixels / float(height * width)) ** 0.5
    return max(1, int(width * scale)), max(1, int(height * scale))


def _resize_box(pixels: np.ndarray, max_pixels: int) -> np.ndarray:
    """PIL area (BOX) resampling of a contiguous HxW or HxWx3 uint8 array to the fitted size."""
    from PIL import Image

    return np.asarray(Image.fromarray(pixels).resize(fitted_size(pixels.shape[0], pixels.shape[1], max_pixels),
                                                     Image.BOX))
