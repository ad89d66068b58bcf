# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What an operator sees at a glance: the newest camera frame with the reward node's view of the task drawn on it.

Drawn with Pillow, no ROS: the instruction and stage at the top; a progress bar, the success
probability and the latest failure at the bottom. Frames narrower than ``MIN_WIDTH`` are scaled up
first so the text stays legible in rqt_image_view or Foxglove.
"""
from __future__ import annotations

import dataclasses
import textwrap
from typing import Optional

import numpy as np

MIN_WIDTH = 480
BAR_COLOUR = (40, 200, 80)
SUCCESS_COLOUR = (250, 200, 40)
FAILURE_COLOUR = (240, 60, 60)


@dataclasses.dataclass
class OverlayState:
    """The node's latest published view; None fields are drawn as unknown."""

    instruction: str = ""
    stage_index: int = 0
    stage_count: int = 0
    status: str = ""
    progress: Optional[float] = None
    success_probability: Optional[float] = None
    failure: str = ""


def _font(size: int):
    from PIL import ImageFont
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 (Humble's): one bitmap size
        return ImageFont.load_default()


def draw_overlay(rgb: np.ndarray, state: OverlayState) -> np.ndarray:
    """Return a new HxWx3 uint8 RGB image: ``rgb`` (scaled up if narrow) with ``state`` drawn on it."""
    from PIL import Image, ImageDraw
    image = Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8))
    if image.width < MIN_WIDTH:
        scale = MIN_WIDTH / image.width
        image = image.resize((MIN_WIDTH, max(1, round(image.height * scale))), Image.NEAREST)
    width, height = image.size
    size = max(12, width // 40)
    font = _font(size)
    line = size + 4
    canvas = ImageDraw.Draw(image, "RGBA")
    top = textwrap.wrap(state.instruction or "(no task)", max(20, int(width / (size * 0.6))))[:2]
    stage = (f"stage {state.stage_index + 1}/{state.stage_count}" if state.stage_count else "no episode")
    top.append(f"{stage}  {state.status}".strip())
    canvas.rectangle((0, 0, width, line * len(top) + 6), fill=(0, 0, 0, 150))
    for row, text in enumerate(top):
        canvas.text((6, 3 + row * line), text, fill=(255, 255, 255), font=font)
    rows = 3 if state.failure else 2
    bottom = height - line * rows - 8
    canvas.rectangle((0, bottom, width, height), fill=(0, 0, 0, 150))
    bar_left, bar_right = 6 + size * 8, width - 6
    y = bottom + 4
    _bar(canvas, (bar_left, y, bar_right, y + line - 4), state.progress, BAR_COLOUR)
    canvas.text((6, y), _label("progress", state.progress), fill=(255, 255, 255), font=font)
    y += line
    _bar(canvas, (bar_left, y, bar_right, y + line - 4), state.success_probability, SUCCESS_COLOUR)
    canvas.text((6, y), _label("success", state.success_probability), fill=(255, 255, 255), font=font)
    if state.failure:
        y += line
        canvas.text((6, y), state.failure[: int(width / (size * 0.55))], fill=FAILURE_COLOUR, font=font)
    return np.asarray(image.convert("RGB"))


def _label(name: str, value: Optional[float]) -> str:
    return f"{name} {'-' if value is None else f'{value:.2f}'}"


def _bar(canvas, box, value: Optional[float], colour) -> None:
    left, top, right, bottom = box
    canvas.rectangle(box, outline=(255, 255, 255), width=1)
    if value is not None and value == value:  # NaN: unknown
        fill = left + 1 + (right - left - 2) * min(1.0, max(0.0, float(value)))
        if fill > left + 1:
            canvas.rectangle((left + 1, top + 1, fill, bottom - 1), fill=colour)
