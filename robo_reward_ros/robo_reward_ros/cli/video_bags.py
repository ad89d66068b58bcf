"""``robo-reward video-bags OUT VIDEO...``: turn recorded videos into bags with the same layout
as the simulated episodes, so recordings replay the same way.

    robo-reward video-bags OUT clip.mp4 --instruction "pick up the cup" [--outcome success]
    robo-reward video-bags OUT --robot-clips DIR     # the shared robot clips, with their instructions
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional, Sequence


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


def make_video_bags(out: str, videos: Sequence[str], instructions: Sequence[str],
                    outcome: str = "", sample_fps: float = 10.0, max_pixels: int = 224 * 224,
                    force: bool = False, log=print) -> List[str]:
    import shutil
    from robo_reward_ros.evaluation.episode_bag import write_episode_bag
    from robo_reward_ros.evaluation.video_episodes import video_episode
    if len(instructions) == 1:
        instructions = list(instructions) * len(videos)
    if len(instructions) != len(videos):
        raise ValueError(f"{len(videos)} video(s) but {len(instructions)} instruction(s)")
    paths = []
    for video, instruction in zip(videos, instructions):
        path = os.path.join(out, os.path.splitext(os.path.basename(video))[0])
        if os.path.isfile(os.path.join(path, "metadata.yaml")) and not force:
            paths.append(path)
            continue
        if os.path.exists(path):
            shutil.rmtree(path)
        episode = video_episode(video, instruction, sample_fps or None, max_pixels, outcome)
        write_episode_bag(episode, path)
        log(f"{path}: {len(episode.frames)} frames, '{instruction}'")
        paths.append(path)
    return paths


def robot_clip_videos(folder: str) -> List[tuple]:
    from robo_reward_ros.evaluation.video_episodes import ROBOT_CLIP_INSTRUCTIONS
    found = [(os.path.join(folder, stem + ".mp4"), text)
             for stem, text in ROBOT_CLIP_INSTRUCTIONS.items()
             if os.path.isfile(os.path.join(folder, stem + ".mp4"))]
    if not found:
        raise FileNotFoundError(f"{folder}: none of {sorted(ROBOT_CLIP_INSTRUCTIONS)} (.mp4)")
    return found


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
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
        print(f"robo-reward video-bags: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
