# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Recorded videos (a robot's own clips) as episodes, for the same bag layout as the sim ones.

Frames are decoded with PyAV (recordings/video_file.py); stamps are presentation times from the first
frame. A video carries no per-frame truth; the outcome may be given when it is known.
"""
from __future__ import annotations

import os
from typing import Optional

from robo_reward_ros.core.image_decoding import fit_pixels
from robo_reward_ros.core.frame import Frame
from robo_reward_ros.recordings.video_file import read_video
from robo_reward_ros.recordings.episode import Episode

# The instructions of the three clips in the shared robot-clips folder (its README).
ROBOT_CLIP_INSTRUCTIONS = {
    "berkeley_rpt_stack_cup": "Pick up the yellow cup and stack it on the other cup",
    "soar_put_green_stick_in_brown_bowl": "Put green stick in brown bowl",
    "jaco_play_pick_up_green_cup": "Pick up the green cup",
}


def video_episode(path: str, instruction: str, sample_fps: Optional[float] = 10.0,
                  max_pixels: int = 224 * 224, outcome: str = "",
                  name: Optional[str] = None) -> Episode:
    """``sample_fps`` keeps about that many frames per second (None: all).

    Frames larger than ``max_pixels`` are downscaled with their aspect kept (the node does the same
    on arrival).
    """
    frames = [Frame(f.stamp, fit_pixels(f.rgb, max_pixels))
              for f in read_video(path, sample_fps)]
    stem = os.path.splitext(os.path.basename(path))[0]
    return Episode(name=name or stem, instructions=(instruction,), frames=frames, outcome=outcome,
                   task=stem, source="video", info={"video": os.path.basename(path),
                                                    "sample_fps": sample_fps})
