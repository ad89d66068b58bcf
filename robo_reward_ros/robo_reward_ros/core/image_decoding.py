"""Camera messages to RGB arrays, from their raw fields (so the core needs no ROS types).

Raw images are viewed, not copied, where the layout allows; every refusal says exactly what
is wrong with the frame, because a robot's camera driver misconfiguration shows up here first.
"""
from __future__ import annotations

import io

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
# Larger frames than this are refused before any copy: no camera a reward model needs sends
# them, and a corrupt header must not make the node allocate gigabytes.
MAX_PIXELS = 4096 * 4096


class ImageDecodeError(ValueError):
    """The frame cannot be used; the message says why."""


def decode_raw(encoding: str, height: int, width: int, step: int, data) -> np.ndarray:
    """RGB uint8 (height, width, 3) from a sensor_msgs/Image's fields."""
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
    if order is None:
        return np.repeat(pixels, 3, axis=2)
    return np.ascontiguousarray(pixels[:, :, list(order)])


def decode_compressed(format_field: str, data) -> np.ndarray:
    """RGB uint8 from a sensor_msgs/CompressedImage (format "jpeg", "png", or "rgb8; jpeg ...")."""
    from PIL import Image, UnidentifiedImageError  # only compressed streams need Pillow

    kind = compressed_kind(format_field)
    try:
        with Image.open(io.BytesIO(bytes(data))) as image:
            if image.format is None or image.format.lower() != kind:
                raise ImageDecodeError(
                    f"format field says {kind} but the data is {image.format or 'unknown'}")
            if image.width * image.height > MAX_PIXELS:
                raise ImageDecodeError(
                    f"image {image.width}x{image.height} exceeds the {MAX_PIXELS}-pixel limit")
            return np.asarray(image.convert("RGB"))
    except ImageDecodeError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise ImageDecodeError(f"corrupt or truncated {kind} data: {exc}") from exc


def compressed_kind(format_field: str) -> str:
    """The codec named by a CompressedImage format field (image_transport writes e.g.
    "bgr8; jpeg compressed bgr8")."""
    text = format_field.lower()
    for kind, names in (("jpeg", ("jpeg", "jpg")), ("png", ("png",))):
        if any(name in text for name in names):
            return kind
    raise ImageDecodeError(
        f"unknown compression format '{format_field}' (supported: {', '.join(COMPRESSED_FORMATS)})")


def fit_pixels(rgb: np.ndarray, max_pixels: int) -> np.ndarray:
    """Downscale (aspect kept, area resampling) so the frame has at most ``max_pixels``
    pixels; smaller frames are returned as they are. Applied on arrival, it bounds the window's
    memory and the model's input size whatever the camera resolution."""
    height, width = rgb.shape[:2]
    if height * width <= max_pixels:
        return rgb
    from PIL import Image

    scale = (max_pixels / float(height * width)) ** 0.5
    size = (max(1, int(width * scale)), max(1, int(height * scale)))
    return np.asarray(Image.fromarray(np.ascontiguousarray(rgb)).resize(size, Image.BOX))
