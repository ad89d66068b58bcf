# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward video-bags OUT VIDEO...``: turn recorded videos into bags.

The bags have the same layout as the simulated episodes, so recordings replay the same way.

    robo-reward video-bags OUT clip.mp4 --instruction "pick up the cup" [--outcome success]
    robo-reward video-bags OUT --robot-clips DIR     # the shared robot clips, with their instructions
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward video-bags",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder for the bags (one sub-folder per video)")
    parser.add_argument("videos", nargs="*", help="video files (any format FFmpeg reads)")
    parser.add_argument("--instruction", action="append", default=[],
                        help="instruction per video, in order (one given: used for all)")
    parser.add_argument("--robot-clips", metavar="DIR",
                        help="a folder with the three robot clips of the shared data set; "
                             "their instructions are known")
    parser.add_argument("--outcome", default="", choices=("", "success", "partial", "failure"),
                        help="ground-truth outcome, when known (default: unknown)")
    parser.add_argument("--sample-fps", type=float, default=10.0,
                        help="frames per second kept (default 10; 0: every frame)")
    parser.add_argument("--max-pixels", type=int, default=224 * 224,
                        help="downscale larger frames (aspect kept); default 224x224")
    parser.add_argument("--force", action="store_true", help="overwrite existing bags")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from robo_reward_ros.simulation.episode_sets import make_video_bags, robot_clip_videos
    videos, instructions = list(args.videos), list(args.instruction)
    try:
        if args.robot_clips:
            for video, text in robot_clip_videos(args.robot_clips):
                videos.append(video)
                instructions.append(text)
        if not videos:
            raise ValueError("no video given")
        make_video_bags(args.out, videos, instructions, args.outcome, args.sample_fps,
                        args.max_pixels, args.force)
    except (OSError, ValueError, RuntimeError) as exc:
        return fail("video-bags", exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
