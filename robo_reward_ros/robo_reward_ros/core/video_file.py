"""Video files as timestamped RGB frames, decoded with PyAV (FFmpeg's libraries, pinned in
requirements), so recorded robot clips go through the same reward path as camera frames.

Stamps are presentation times in seconds from the first frame, so a table of per-frame rewards
lines up with the video. ``sample_fps`` reproduces the Robometer authors' frame choice for their
example clips (reward-models.md 1.9: ``linspace(0, T-1, round(T*fps/native), dtype=int)``).
"""
from typing import List, Optional

import numpy as np

from .frame import Frame

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
