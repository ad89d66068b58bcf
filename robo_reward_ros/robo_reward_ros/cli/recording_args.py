# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The options that say how to read a robot's own rosbag2 recording, shared by replay and finetune."""
from __future__ import annotations

import argparse

from robo_reward_ros.recordings.robot_recording import STAMP_SOURCES


def add_recording_arguments(parser: argparse.ArgumentParser) -> None:
    recording = parser.add_argument_group(
        "robot recordings", "any rosbag2 (MCAP or sqlite3); without these, the project's own bag "
                            "layout (/camera/image_raw, /instruction, /episode)")
    recording.add_argument("--camera-topic", action="append", default=[], metavar="TOPIC",
                           help="a camera (sensor_msgs/Image or CompressedImage); repeat for "
                                "several cameras")
    recording.add_argument("--instruction", default="", help="the task's instruction, one stage")
    recording.add_argument("--instruction-topic", default="", metavar="TOPIC",
                           help="std_msgs/String topic with the instruction (or a task as JSON); "
                                "the newest one at an episode's start applies")
    recording.add_argument("--task-file", default="", metavar="YAML",
                           help="task stages: a list of instructions, or {stages: [{instruction, "
                                "timeout_sec, success_threshold}], episode_timeout_sec}")
    recording.add_argument("--split-topic", default="", metavar="TOPIC",
                           help="each message on this topic starts a new episode")
    recording.add_argument("--split-gap", type=float, default=0.0, metavar="SEC",
                           help="a camera silence longer than SEC starts a new episode")
    recording.add_argument("--stamps", choices=STAMP_SOURCES, default="header",
                           help="frame times: the images' header stamps (default), or when the "
                                "recorder received each message (for a driver that does not "
                                "stamp its frames)")


def recording_options(args: argparse.Namespace, max_frames=None):
    """Build the reading options from parsed arguments; None when none was given (the project's bags)."""
    from robo_reward_ros.recordings.robot_recording import RecordingOptions
    options = RecordingOptions(tuple(args.camera_topic), args.instruction, args.instruction_topic,
                               args.task_file, args.split_topic, args.split_gap, max_frames,
                               args.stamps)
    return None if options == RecordingOptions(max_frames=max_frames) else options
