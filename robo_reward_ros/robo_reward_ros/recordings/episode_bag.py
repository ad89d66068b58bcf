# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episodes as ROS 2 bags (rosbag2 directories, MCAP storage) written and read with ``rosbags``.

Pure Python, no ROS install needed; ROS 2 Kilted message definitions.

One bag per episode. Topics (type, when: what):

- ``/camera/image_raw`` (``sensor_msgs/msg/Image``, rgb8), every frame: the camera
- ``/instruction`` (``std_msgs/msg/String``), once, at the first frame: first stage's instruction
- ``/episode`` (``std_msgs/msg/String``, JSON), once, at the first frame: task stages, outcome,
  failure kind and step, source, seed
- ``/ground_truth`` (``std_msgs/msg/String``, JSON), with every frame (same stamp):
  ``{"frame", "stage", "success", "progress"}``

Ground truth travels as JSON strings so that any ROS 2 install can play or echo the bag
without extra message packages; ``/ground_truth`` is absent when the truth is unknown (real
videos). Frame stamps (header and bag time) are ``BASE_STAMP_NS`` + seconds from the episode
start, so bags are byte-for-byte reproducible; readers use stamps relative to the first frame.
"""
from __future__ import annotations

import json
import os
from typing import Iterable, List, Optional

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.stamps import to_nanoseconds
from robo_reward_ros.recordings.episode import Episode, FrameTruth
from robo_reward_ros.recordings.output_paths import safe_file_name
from robo_reward_ros.recordings.typestore import IMAGE_TYPE, kilted_typestore, rgb8_image_cdr

IMAGE_TOPIC = "/camera/image_raw"
INSTRUCTION_TOPIC = "/instruction"
EPISODE_TOPIC = "/episode"
TRUTH_TOPIC = "/ground_truth"
STRING_TYPE = "std_msgs/msg/String"
BASE_STAMP_NS = 1_700_000_000 * 10**9  # fixed, so the same episode gives the same bag
FRAME_ID = "camera"


def write_episode_bag(episode: Episode, path: str) -> str:
    """Write ``episode`` to a new bag directory ``path`` (it must not exist)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    store = kilted_typestore()
    String = store.types[STRING_TYPE]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with Writer(path, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP) as writer:
        image_conn = writer.add_connection(IMAGE_TOPIC, IMAGE_TYPE, typestore=store)
        instruction_conn = writer.add_connection(INSTRUCTION_TOPIC, STRING_TYPE, typestore=store)
        episode_conn = writer.add_connection(EPISODE_TOPIC, STRING_TYPE, typestore=store)
        truth_conn = (writer.add_connection(TRUTH_TOPIC, STRING_TYPE, typestore=store)
                      if episode.truth is not None else None)
        first = BASE_STAMP_NS + _ns(episode.frames[0].stamp)
        writer.write(episode_conn, first, store.serialize_cdr(
            String(data=json.dumps(episode.metadata())), STRING_TYPE))
        writer.write(instruction_conn, first, store.serialize_cdr(
            String(data=episode.instructions[0]), STRING_TYPE))
        for index, frame in enumerate(episode.frames):
            stamp = BASE_STAMP_NS + _ns(frame.stamp)
            writer.write(image_conn, stamp, rgb8_image_cdr(store, stamp, frame.rgb, FRAME_ID))
            if truth_conn is not None:
                row = episode.truth[index]
                writer.write(truth_conn, stamp, store.serialize_cdr(String(data=json.dumps(
                    {"frame": index, "stage": row.stage, "success": bool(row.success),
                     "progress": round(float(row.progress), 6)})), STRING_TYPE))
    return path


def _ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def read_episode_bag(path: str, max_frames: Optional[int] = None) -> Episode:
    """Read an episode back from a bag written by :func:`write_episode_bag`, or from any other bag.

    Another bag needs ``/camera/image_raw`` and ``/instruction``; its episode comes without truth or outcome.
    """
    from rosbags.rosbag2 import Reader
    from robo_reward_ros.core.image_decoding import decode_raw
    store = kilted_typestore()
    metadata, instruction = None, None
    frames: List[Frame] = []
    truth_rows = {}
    with Reader(path) as reader:
        wanted = [c for c in reader.connections
                  if c.topic in (IMAGE_TOPIC, INSTRUCTION_TOPIC, EPISODE_TOPIC, TRUTH_TOPIC)]
        if not any(c.topic == IMAGE_TOPIC for c in wanted):
            raise ValueError(f"{path}: no {IMAGE_TOPIC} topic")
        for conn, _, raw in reader.messages(connections=wanted):
            msg = store.deserialize_cdr(raw, conn.msgtype)
            if conn.topic == IMAGE_TOPIC:
                if max_frames is not None and len(frames) >= max_frames:
                    continue
                # Integer nanoseconds: seconds since 1970 as a float would lose the sub-us part.
                stamp_ns = to_nanoseconds(msg.header.stamp)
                rgb = decode_raw(msg.encoding, msg.height, msg.width, msg.step,
                                 bytes(msg.data))
                frames.append(Frame(stamp=stamp_ns, rgb=rgb))
            elif conn.topic == EPISODE_TOPIC:
                metadata = json.loads(msg.data)
            elif conn.topic == INSTRUCTION_TOPIC and instruction is None:
                instruction = msg.data
            else:
                row = json.loads(msg.data)
                truth_rows[int(row["frame"])] = FrameTruth(
                    int(row["stage"]), bool(row["success"]), float(row["progress"]))
    if not frames:
        raise ValueError(f"{path}: {IMAGE_TOPIC} has no frames")
    origin = frames[0].stamp
    frames = [Frame(stamp=(f.stamp - origin) / 1e9, rgb=f.rgb) for f in frames]
    metadata = metadata or {}
    instructions = metadata.get("instructions") or ([instruction] if instruction else [])
    if not instructions:
        raise ValueError(f"{path}: no instruction ({INSTRUCTION_TOPIC} or {EPISODE_TOPIC})")
    truth = None
    if truth_rows:
        truth = [truth_rows[i] for i in range(len(frames)) if i in truth_rows]
        if len(truth) != len(frames):
            raise ValueError(f"{path}: ground truth for {len(truth)} of {len(frames)} frames")
    return Episode(
        name=safe_file_name(metadata.get("name") or os.path.basename(os.path.normpath(path))),
        instructions=tuple(instructions), frames=frames, truth=truth,
        outcome=metadata.get("outcome", ""), failure_kind=metadata.get("failure_kind", ""),
        failure_step=metadata.get("failure_step"), task=metadata.get("task", ""),
        source=metadata.get("source", ""), info=dict(metadata.get("info") or {}))


def find_bags(paths: Iterable[str]) -> List[str]:
    """Bags named directly, or found one level below a named directory (sorted).

    A bag is a rosbag2 directory (metadata.yaml) or a bare ``.mcap`` file (rosbags reads its
    summary; recordings copied out of their folder, or written by other MCAP tools, come so).
    """
    found: List[str] = []
    for path in paths:
        if _is_bag(path):
            found.append(path)
        elif os.path.isdir(path):
            found += sorted(os.path.join(path, name) for name in os.listdir(path)
                            if _is_bag(os.path.join(path, name)))
        else:
            raise FileNotFoundError(f"{path}: not a bag directory (metadata.yaml), an .mcap file nor a folder")
    if not found:
        raise FileNotFoundError(f"no bags in {list(paths)}")
    return found


def _is_bag(path: str) -> bool:
    if os.path.isfile(path):
        return path.endswith(".mcap")
    return os.path.isfile(os.path.join(path, "metadata.yaml"))
