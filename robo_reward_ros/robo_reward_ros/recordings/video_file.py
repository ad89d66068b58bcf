# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Video files as timestamped RGB frames, so recorded robot clips go through the same reward path as camera frames.

Decoded with PyAV (FFmpeg's libraries, pinned in requirements).

Stamps are presentation times in seconds from the first frame, so a table of per-frame rewards
lines up with the video. ``sample_fps`` reproduces the Robometer authors' frame choice for their
example clips (reward-models.md 1.9: ``linspace(0, T-1, round(T*fps/native), dtype=int)``).
"""
import os
from typing import List, Optional

import numpy as np

from robo_reward_ros.core.frame import Frame

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


def _open(path: str):
    try:
        import av
    except ImportError:
        raise RuntimeError("reading a video needs PyAV: pip install av (see requirements)") from None
    try:
        return av.open(path)
    except av.error.FFmpegError as exc:
        raise ValueError(f"{path}: not a readable video ({exc})") from exc


def read_video(path: str, sample_fps: Optional[float] = None) -> List[Frame]:
    """Every frame of the first video stream as uint8 RGB, or the ``sample_fps`` subset."""
    with _open(path) as container:
        if not container.streams.video:
            raise ValueError(f"{path}: no video stream")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        rate = float(stream.average_rate or stream.guessed_rate or 30.0)
        stamps, images = [], []
        for index, frame in enumerate(container.decode(stream)):
            stamps.append(float(frame.time) if frame.time is not None else index / rate)
            images.append(frame.to_ndarray(format="rgb24"))
    if not images:
        raise ValueError(f"{path}: the video stream has no frames")
    first = stamps[0]
    indices = range(len(images)) if sample_fps is None else sample_indices(len(images), rate, sample_fps)
    return [Frame(stamp=stamps[i] - first, rgb=np.ascontiguousarray(images[i])) for i in indices]


def sample_indices(count: int, native_fps: float, sample_fps: float) -> List[int]:
    """Evenly spaced frame indices at about ``sample_fps``, first and last kept, truncated to ints."""
    if sample_fps <= 0:
        raise ValueError(f"sample_fps must be positive, got {sample_fps}")
    wanted = min(count, max(1, int(round(count * sample_fps / native_fps))))
    return sorted(set(np.linspace(0, count - 1, wanted, dtype=int).tolist()))


def read_frames_dir(path: str, fps: float) -> List[Frame]:
    """Images sorted by file name, stamped ``index / fps``."""
    from PIL import Image
    names = sorted(n for n in os.listdir(path) if n.lower().endswith(IMAGE_EXTENSIONS))
    if not names:
        raise ValueError(f"no images ({', '.join(IMAGE_EXTENSIONS)}) in {path}")
    frames = []
    for index, name in enumerate(names):
        with Image.open(os.path.join(path, name)) as image:
            frames.append(Frame(stamp=index / fps, rgb=np.asarray(image.convert("RGB"))))
    return frames
