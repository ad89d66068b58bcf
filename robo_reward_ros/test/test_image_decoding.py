# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Camera frames to RGB: every supported encoding, and a clear refusal for each bad frame."""
import io
import zlib

import numpy as np
import pytest
from PIL import Image

from robo_reward_ros.core.image_decoding import (ImageDecodeError, decode_compressed,
                                                 decode_raw, fit_pixels)

RGB = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)


def _raw(pixels, padding=0):
    height, width, channels = pixels.shape
    rows = np.zeros((height, width * channels + padding), dtype=np.uint8)
    rows[:, :width * channels] = pixels.reshape(height, -1)
    return dict(height=height, width=width, step=width * channels + padding, data=rows.tobytes())


@pytest.mark.parametrize("encoding, pixels", [
    ("rgb8", RGB),
    ("bgr8", RGB[:, :, ::-1]),
    ("rgba8", np.concatenate([RGB, np.full((4, 5, 1), 255, np.uint8)], axis=2)),
    ("bgra8", np.concatenate([RGB[:, :, ::-1], np.full((4, 5, 1), 7, np.uint8)], axis=2)),
])
@pytest.mark.parametrize("padding", [0, 3])
def test_color_encodings_give_rgb(encoding, pixels, padding):
    decoded = decode_raw(encoding, **_raw(pixels, padding))
    assert decoded.dtype == np.uint8 and decoded.shape == (4, 5, 3)
    np.testing.assert_array_equal(decoded, RGB)


def test_mono8_is_replicated_to_three_channels():
    gray = RGB[:, :, :1]
    decoded = decode_raw("mono8", **_raw(gray))
    np.testing.assert_array_equal(decoded, np.repeat(gray, 3, axis=2))


@pytest.mark.parametrize("change, message", [
    (dict(encoding="16UC1"), "unsupported encoding '16UC1'"),
    (dict(encoding="yuv422"), "unsupported encoding 'yuv422'"),
    (dict(encoding="bayer_rggb8"), "unsupported encoding 'bayer_rggb8'"),
    (dict(width=0), "empty image 0x4"),
    (dict(step=14), "step 14 < width 5 x 3 channel(s)"),
    (dict(data=b"\0" * 59), "data has 59 bytes, expected step x height = 15x4 = 60"),
    (dict(data=b"\0" * 61), "data has 61 bytes"),
    (dict(width=8000, height=8000, step=24000), "exceeds the"),
])
def test_bad_raw_frames_are_refused_with_the_reason(change, message):
    fields = dict(encoding="rgb8", **_raw(RGB))
    fields.update(change)
    with pytest.raises(ImageDecodeError) as error:
        decode_raw(**fields)
    assert message in str(error.value)


def _encoded(kind):
    buffer = io.BytesIO()
    Image.fromarray(RGB).save(buffer, format=kind.upper())
    return buffer.getvalue()


def test_png_round_trips_exactly():
    np.testing.assert_array_equal(decode_compressed("png", _encoded("png")), RGB)


def test_jpeg_with_image_transport_format_field():
    decoded = decode_compressed("bgr8; jpeg compressed bgr8", _encoded("jpeg"))
    assert decoded.shape == (4, 5, 3)
    assert np.abs(decoded.astype(int) - RGB).mean() < 20  # lossy, but the same picture


def bomb_header(kind: str, width: int = 20000, height: int = 20000) -> bytes:
    """Return a small image whose header declares ``width`` x ``height`` (a decompression bomb's)."""
    data = bytearray(_encoded(kind))
    if kind == "png":  # IHDR: width and height right after the chunk type, then its CRC
        at = data.index(b"IHDR")
        data[at + 4:at + 12] = width.to_bytes(4, "big") + height.to_bytes(4, "big")
        data[at + 17:at + 21] = zlib.crc32(bytes(data[at:at + 17])).to_bytes(4, "big")
    else:  # baseline SOF0: length (2), precision (1), height (2), width (2)
        at = data.index(b"\xff\xc0") + 5
        data[at:at + 4] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


@pytest.mark.parametrize("format_field, data, message", [
    ("jpeg", _encoded("jpeg")[:40], "corrupt or truncated jpeg"),
    ("jpeg", b"", "empty jpeg data (0 bytes)"),
    ("png", b"\x00" * 12, "corrupt or truncated png data: no image format recognises its 12 bytes"),
    # Pillow's own limit raised DecompressionBombError, which escaped as "callback failed".
    ("jpeg", bomb_header("jpeg"), "jpeg declares an image over the 16777216-pixel limit"),
    ("png", bomb_header("png"), "png declares an image over the 16777216-pixel limit"),
    ("jpeg", bomb_header("jpeg", 4097, 4096), "image 4097x4096 exceeds the 16777216-pixel limit"),
    ("png", b"\x89PNG\r\n\x1a\n" + b"\0" * 30, "corrupt or truncated png"),
    ("jpeg", _encoded("png"), "format field says jpeg but the data is PNG"),
    ("webp", b"RIFF", "unknown compression format 'webp'"),
])
def test_bad_compressed_frames_are_refused_with_the_reason(format_field, data, message):
    with pytest.raises(ImageDecodeError) as error:
        decode_compressed(format_field, data)
    assert message in str(error.value)


def test_large_frames_are_downscaled_with_their_aspect_kept():
    frame = np.zeros((720, 1280, 3), dtype=np.uint8)
    frame[:, 640:] = 200
    small = fit_pixels(frame, 224 * 224)
    assert small.shape[0] * small.shape[1] <= 224 * 224 and small.shape[2] == 3
    assert abs(small.shape[1] / small.shape[0] - 1280 / 720) < 0.02
    assert small[:, : small.shape[1] // 2 - 2].max() == 0 and small[:, small.shape[1] // 2 + 2:].min() == 200


def test_small_frames_are_untouched():
    assert fit_pixels(RGB, 224 * 224) is RGB


@pytest.mark.parametrize("encoding, channels", [("rgb8", 3), ("bgr8", 3), ("rgba8", 4), ("bgra8", 4),
                                                ("mono8", 1)])
@pytest.mark.parametrize("padding", [0, 4])
def test_decoding_with_max_pixels_equals_decoding_then_fitting(encoding, channels, padding):
    rng = np.random.default_rng(channels + padding)
    height, width = 181, 263
    step = width * channels + padding
    data = rng.integers(0, 256, step * height, dtype=np.uint8).tobytes()
    for max_pixels in (4096, 10000, height * width):
        fused = decode_raw(encoding, height, width, step, data, max_pixels=max_pixels)
        assert np.array_equal(fused, fit_pixels(decode_raw(encoding, height, width, step, data), max_pixels))


@pytest.mark.parametrize("kind, mode", [("jpeg", "RGB"), ("jpeg", "L"), ("png", "RGB"), ("png", "RGBA"),
                                        ("png", "P")])
def test_compressed_decoding_with_max_pixels_equals_decoding_then_fitting(kind, mode):
    rng = np.random.default_rng(3)
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (150, 210, 3), dtype=np.uint8)).convert(mode).save(buffer, format=kind)
    data = buffer.getvalue()
    for max_pixels in (4096, 150 * 210):
        fused = decode_compressed(kind, data, max_pixels=max_pixels)
        assert fused.shape[2] == 3
        expected = fit_pixels(decode_compressed(kind, data), max_pixels)
        if kind == "jpeg" and max_pixels < 150 * 210:  # decoded at a reduced scale (draft mode)
            assert fused.shape == expected.shape
            continue  # on noise the two downscalings differ; a smooth picture is compared below
        assert np.array_equal(fused, expected)


def test_a_large_jpeg_is_decoded_at_a_reduced_scale_close_to_a_full_decode_then_fitted():
    """A 4096x4096 frame for a 224x224 model: the decoder scales by 1/8, the rest is area resampling."""
    y, x = np.mgrid[0:1024, 0:1536]
    picture = np.stack([x * 255 // 1535, y * 255 // 1023, (x + y) * 255 // 2558], axis=2).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(picture).save(buffer, format="JPEG", quality=95)
    fused = decode_compressed("jpeg", buffer.getvalue(), max_pixels=224 * 224)
    expected = fit_pixels(decode_compressed("jpeg", buffer.getvalue()), 224 * 224)
    assert fused.shape == expected.shape == (182, 274, 3)
    assert np.abs(fused.astype(int) - expected).mean() < 1.5


def _png16(values):
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(values, dtype=np.uint16)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("format_field", ["mono16; png compressed mono16", "png",
                                          "16UC1; png compressed 16UC1"])
def test_compressed_16_bit_frames_are_refused_like_raw_16_bit(format_field):
    """Issue 20: a 16-bit PNG decoded through Pillow's RGB conversion came out all white."""
    data = _png16(np.full((4, 6), 1000))
    with pytest.raises(ImageDecodeError, match="16-bit"):
        decode_compressed(format_field, data)
    with pytest.raises(ImageDecodeError, match="unsupported encoding '16UC1'"):
        decode_raw("16UC1", 4, 6, 12, bytes(48))  # as the raw frame is


def test_an_8_bit_png_under_a_16_bit_format_field_is_refused_too():
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((4, 6, 3), np.uint8)).save(buffer, format="PNG")
    with pytest.raises(ImageDecodeError, match="'rgb16'"):
        decode_compressed("rgb16; png compressed rgb16", buffer.getvalue())
