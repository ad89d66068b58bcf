# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward score``: score a folder of frames or a video with a reward model, print a table.

Videos are decoded with PyAV (recordings/video_file.py); a rosbag2 folder (MCAP or sqlite3) gives
one camera's frames of one episode (``--camera-topic``, ``--episode`` with ``--split-gap`` /
``--split-topic``; the instruction may come from ``--instruction-topic``). Stamps are seconds from
the first frame. A plugin backend is scored as a built-in one: ``--plugin-modules`` imports the
modules that register it, ``--backend`` names it.

    robo-reward score --model DIR_OR_ID --instruction "..." FRAMES_DIR_OR_VIDEO_OR_BAG [--json]
"""
import argparse
import json
import os
import sys
from typing import Optional, Sequence

from robo_reward_ros.cli import fail, module_list


def format_table(output, frames=None) -> str:
    """One row per scored frame; ``frame`` is its index among the input ``frames`` (matched by stamp).

    A model scores at most its own number of frames (Robometer 8) from a longer clip, so with more
    input frames a first line says how many were scored and which.
    """
    stamps = [f.stamp for f in frames] if frames is not None else list(output.stamps)
    lines = []
    if len(output.stamps) < len(stamps):
        lines.append(f"# {len(output.stamps)} of {len(stamps)} frames scored (the model takes at most "
                     f"{len(output.stamps)} from a clip, spread over it; --sample-fps chooses fewer "
                     f"to start with)")
    lines.append(f"{'frame':>5}  {'stamp_s':>9}  {'progress':>8}  {'success':>7}")
    for index, (stamp, progress) in enumerate(zip(output.stamps, output.progress)):
        source = min(range(len(stamps)), key=lambda i: abs(stamps[i] - stamp)) if stamps else index
        success = "-" if output.success is None else f"{output.success[index]:.4f}"
        lines.append(f"{source:>5}  {stamp:>9.3f}  {progress:>8.4f}  {success:>7}")
    return "\n".join(lines)


def as_json(output, args) -> str:
    extras = {k: v for k, v in output.extras.items() if isinstance(v, (int, float, str, list))}
    return json.dumps({"model": args.model, "backend": output.backend, "instruction": args.instruction,
                       "stamps": output.stamps.tolist(), "progress": output.progress.tolist(),
                       "success": None if output.success is None else output.success.tolist(), "extras": extras},
                      indent=2)


def build_parser() -> argparse.ArgumentParser:
    from robo_reward_ros.recordings.robot_recording import STAMP_SOURCES
    from robo_reward_ros.models.loading.choices import PRECISIONS
    parser = argparse.ArgumentParser(prog="robo-reward score", description="Per-frame progress of a clip.")
    parser.add_argument("--model", required=True, help="model id or local checkpoint directory")
    parser.add_argument("--instruction", default="", help="the task (required unless a bag's --instruction-topic)")
    parser.add_argument("--backend", default="auto",
                        help="auto recognises Robometer; plain Qwen3-VL needs roboreward or topreward; remote, "
                             "or a plugin backend registered by --plugin-modules")
    parser.add_argument("--plugin-modules", default="", metavar="MODULES",
                        help="comma-separated modules to import first; they may register backends")
    parser.add_argument("--precision", default="bf16", choices=PRECISIONS)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--fps", type=float, default=2.0, help="frame rate of a folder of images")
    parser.add_argument("--sample-fps", type=float,
                        help="video: keep about this many frames per second (the Robometer authors' choice for "
                             "their example clips is 3); default: every frame")
    parser.add_argument("--vision-onnx", help="run the vision tower with ONNX Runtime from this exported graph "
                                              "(or directory of graphs; see robo-reward export-onnx)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    bag = parser.add_argument_group("bags", "a rosbag2 folder as the source (see robo-reward replay --help)")
    bag.add_argument("--camera-topic", default="", metavar="TOPIC", help="the camera (Image or CompressedImage)")
    bag.add_argument("--instruction-topic", default="", metavar="TOPIC")
    bag.add_argument("--split-topic", default="", metavar="TOPIC")
    bag.add_argument("--split-gap", type=float, default=0.0, metavar="SEC")
    bag.add_argument("--stamps", choices=STAMP_SOURCES, default="header",
                     help="frame times: header stamps, or the recorder's receive times")
    bag.add_argument("--episode", type=int, default=0, help="which episode of the bag (default 0)")
    bag.add_argument("--max-pixels", type=int, default=50176, help="downscale frames to this many pixels")
    parser.add_argument("source", help="folder of images (sorted by name), a video file, or a rosbag2 folder")
    return parser


def _bag_frames(args):
    """One camera's frames of one episode of a bag; the instruction from the bag unless given."""
    from robo_reward_ros.recordings.robot_recording import RecordingOptions, episode_frames
    from robo_reward_ros.recordings.video_file import sample_indices
    options = RecordingOptions((args.camera_topic,) if args.camera_topic else (), args.instruction,
                               args.instruction_topic, "", args.split_topic, args.split_gap,
                               stamps=args.stamps)
    recorded, frames = episode_frames(args.source, options, args.max_pixels, args.episode)
    args.instruction = args.instruction or recorded.instructions[0]
    if args.sample_fps and len(frames) > 1:
        native = (len(frames) - 1) / max(frames[-1].stamp, 1e-9)
        frames = [frames[i] for i in sample_indices(len(frames), native, args.sample_fps)]
    return frames


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from robo_reward_ros.models.loading.backend_registry import backend_names, import_plugins
    import_plugins(module_list(args.plugin_modules))
    if args.backend not in backend_names():  # checked before any frame is read, as argparse's choices were
        parser.error(f"argument --backend: invalid choice: {args.backend!r} (choose from "
                     f"{', '.join(backend_names())})")
    from robo_reward_ros.recordings.video_file import read_frames_dir, read_video
    from robo_reward_ros.models.loading.loader import load_reward_model
    try:
        if args.fps <= 0 or (args.sample_fps is not None and args.sample_fps <= 0):
            raise ValueError("--fps and --sample-fps must be > 0")
        if os.path.isfile(os.path.join(args.source, "metadata.yaml")) or args.source.endswith(".mcap"):
            frames = _bag_frames(args)
        elif os.path.isdir(args.source):
            frames = read_frames_dir(args.source, args.fps)
        else:
            frames = read_video(args.source, args.sample_fps)
        if not args.instruction:
            raise ValueError("--instruction is required (or, for a bag, --instruction-topic)")
    except (OSError, RuntimeError, ValueError) as exc:
        return fail("score", exc)
    options = {"vision_runtime": "onnx", "vision_onnx": args.vision_onnx} if args.vision_onnx else {}
    model = load_reward_model(args.model, backend=args.backend, precision=args.precision, device=args.device,
                              **options)
    try:
        output = model.score_episode(args.instruction, frames)  # offline: TOPReward normalises with hindsight
    finally:
        model.close()
    print(as_json(output, args) if args.json else format_table(output, frames))
    return 0


if __name__ == "__main__":
    sys.exit(main())
