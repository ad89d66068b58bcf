# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Sets of episode bags made from Meta-World renders or recorded videos (one bag per episode).

What ``robo-reward sim-bags`` and ``video-bags`` run, and what the demo builds on first use.
"""
from __future__ import annotations

import os
from typing import Dict, List, Sequence

from robo_reward_ros.core.task_spec import build_task

MIN_PIXELS = 32 * 32


def make_sim_bags(out: str, scenarios: Sequence[str] = (), steps: int = 100, size: int = 224,
                  seeds: int = 1, force: bool = False, log=print) -> List[str]:
    """Render and write the bags; an existing bag is kept unless ``force``. Returns their paths."""
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    from robo_reward_ros.simulation.metaworld_episodes import (SCENARIOS, generate_episode,
                                                               scenario_by_name)
    chosen = [scenario_by_name(n) for n in scenarios] if scenarios else list(SCENARIOS)
    paths = []
    for offset in range(seeds):
        for scenario in chosen:
            name = scenario.name if offset == 0 else f"{scenario.name}_s{scenario.seed + offset}"
            path = os.path.join(out, name)
            if not _clear_for_writing(path, force):
                paths.append(path)
                continue
            stage_steps = steps * (2 if scenario.mode == "two_stage" else 1)
            episode = generate_episode(scenario, stage_steps, size, seed_offset=offset)
            write_episode_bag(episode, path)
            log(f"{path}: {len(episode.frames)} frames, {episode.outcome}"
                + (f" ({episode.failure_kind} at frame {episode.failure_step})"
                   if episode.failure_kind else ""))
            paths.append(path)
    return paths


def _clear_for_writing(path: str, force: bool) -> bool:
    """Whether a bag is to be written at ``path``: an existing bag is kept unless forced (then removed).

    Anything else in the way is refused, never removed.
    """
    import shutil
    is_bag = os.path.isfile(os.path.join(path, "metadata.yaml"))
    if is_bag and not force:
        return False
    if os.path.exists(path):
        if not is_bag:
            raise FileExistsError(f"{path} exists and is not a bag; not overwritten")
        shutil.rmtree(path)
    return True


def make_video_bags(out: str, videos: Sequence[str], instructions: Sequence[str],
                    outcome: str = "", sample_fps: float = 10.0, max_pixels: int = 224 * 224,
                    force: bool = False, log=print) -> List[str]:
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    from robo_reward_ros.simulation.video_episodes import video_episode
    if len(instructions) == 1:
        instructions = list(instructions) * len(videos)
    if len(instructions) != len(videos):
        raise ValueError(f"{len(videos)} video(s) but {len(instructions)} instruction(s)")
    if max_pixels < MIN_PIXELS:
        raise ValueError(f"--max-pixels {max_pixels}: at least {MIN_PIXELS} (32x32) for a model to see")
    for instruction in instructions:
        build_task([instruction])  # an empty or unusable one is refused now, not at replay
    named: Dict[str, str] = {}
    for video in videos:  # one bag per video, named after it: two of one name would be one bag
        name = os.path.splitext(os.path.basename(video))[0]
        if name in named:
            raise ValueError(f"{named[name]} and {video} would both be the bag {os.path.join(out, name)}; "
                             f"rename one, or run once per folder with another OUT")
        named[name] = video
    paths = []
    for video, instruction in zip(videos, instructions):
        path = os.path.join(out, os.path.splitext(os.path.basename(video))[0])
        if not _clear_for_writing(path, force):
            log(f"{path}: exists, kept (--force writes it again)")
            paths.append(path)
            continue
        episode = video_episode(video, instruction, sample_fps or None, max_pixels, outcome)
        write_episode_bag(episode, path)
        log(f"{path}: {len(episode.frames)} frames, '{instruction}'")
        paths.append(path)
    return paths


def robot_clip_videos(folder: str) -> List[tuple]:
    from robo_reward_ros.simulation.video_episodes import ROBOT_CLIP_INSTRUCTIONS
    found = [(os.path.join(folder, stem + ".mp4"), text)
             for stem, text in ROBOT_CLIP_INSTRUCTIONS.items()
             if os.path.isfile(os.path.join(folder, stem + ".mp4"))]
    if not found:
        raise FileNotFoundError(f"{folder}: none of {sorted(ROBOT_CLIP_INSTRUCTIONS)} (.mp4)")
    return found
