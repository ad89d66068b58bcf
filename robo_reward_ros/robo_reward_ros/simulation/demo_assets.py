# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What the demo and the offline tools build on first use: the tiny checkpoint and the episode bags.

The trained demo model itself is in models/loading/bundled_demo.py (the node loads it too).

They are cached under ``~/.cache/robo_reward_ros`` (``ROBO_REWARD_CACHE`` overrides). Nothing is downloaded.
"""
from __future__ import annotations

import os
from typing import List, Optional

from robo_reward_ros.models.loading.bundled_demo import building, cache_dir

ROBOT_CLIPS_ENV = "ROBO_REWARD_ROBOT_CLIPS"

# A success (progress rises), a dropped puck (a failure to catch), a two-stage task (a stage advance).
DEMO_SCENARIOS = ("pick_place_expert", "pick_place_dropped", "drawer_open_then_close")
# Rules for 10-second clips (the node's defaults suit minutes-long episodes): see the README.
# The model's successes and terminal failures wait for the demo's scripted operator (ground truth),
# which vetoes the early ones: the operator in the loop, shown once per such decision.
DEMO_PARAMETERS = {"failure.stall_window_sec": 4.0, "failure.low_progress_grace_sec": 5.0,
                   "inference.rate_hz": 2.0, "operator.confirm_decisions": True,
                   "operator.confirm_timeout_sec": 5.0}
# The random model's success head sits near 0.7: a higher threshold keeps it from declaring
# every episode a success at once.
RANDOM_MODEL_PARAMETERS = {**DEMO_PARAMETERS, "success.threshold": 0.9}
ROBOT_LINE = ("ros2 launch robo_reward_ros reward.launch.py camera_topics:=/camera/color/image_raw "
              "instruction:=\"pick up the red block\"   # model_preset robometer-4b-nf4 (default)")


def demo_checkpoint(log=print) -> str:
    """Return a tiny Robometer-layout checkpoint (random weights), built once."""
    path = os.path.join(cache_dir(), "demo-robometer-tiny")
    with building(path):
        if not os.path.isfile(os.path.join(path, "config.yaml")):
            from robo_reward_ros.models.testing.tiny_checkpoints import build_checkpoint
            log(f"building a tiny offline Robometer checkpoint in {path} ...")
            build_checkpoint("robometer", path)
    return path


def demo_sim_bags(scenarios=(), steps: int = 100, log=print) -> List[str]:
    from robo_reward_ros.simulation.episode_sets import make_sim_bags
    out = os.path.join(cache_dir(), "bags", "metaworld")
    with building(out):
        return make_sim_bags(out, scenarios, steps, log=log)


def robot_clips_dir() -> Optional[str]:
    """Return the shared real-robot clips, when this checkout has them.

    Either ``../shared/data/robot-clips`` next to the repository, or ``ROBO_REWARD_ROBOT_CLIPS``.
    """
    candidates = [os.environ.get(ROBOT_CLIPS_ENV, "")]
    here = os.path.dirname(os.path.abspath(__file__))
    for up in range(3, 7):  # source tree or an install prefix: look a few levels up
        root = os.path.abspath(os.path.join(here, *[".."] * up))
        candidates.append(os.path.join(root, "shared", "data", "robot-clips"))
        candidates.append(os.path.join(os.path.dirname(root), "shared", "data", "robot-clips"))
    return next((c for c in candidates if c and os.path.isdir(c)), None)


def demo_clip_bags(log=print) -> List[str]:
    folder = robot_clips_dir()
    if folder is None:
        return []
    from robo_reward_ros.simulation.episode_sets import make_video_bags, robot_clip_videos
    videos = robot_clip_videos(folder)
    out = os.path.join(cache_dir(), "bags", "robot-clips")
    with building(out):
        return make_video_bags(out, [v for v, _ in videos], [t for _, t in videos], log=log)
