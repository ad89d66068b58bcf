# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Spans of recorded bags written as bags of their own, one per kept span.

A kept span of a bag must still play (``ros2 bag play``) and still read as an episode (the
project's readers need the instruction, which a recorder writes once, near the start). So the
span is cut by the camera's frames (the frames the ranking counted: the default camera, or the
one named) and every topic's messages recorded from the span's first frame to its last one
(log time) are copied byte for byte; the newest message before the span on a topic that states
context rather than a stream (the instruction topics, the project's ``/episode``, topics offered
as transient-local) is written again at the span's start. In the project's own bags, the
``/ground_truth`` rows are numbered by frame, so they are renumbered from the span's first frame,
and ``/episode`` gets the new name and the span it came from (its outcome still describes the
whole recorded episode). A span that starts at the first frame keeps what came before it, and
one that ends at the last frame what came after: a whole episode is the whole bag.
"""
from __future__ import annotations

import dataclasses
import json
import os
import struct
from typing import Dict, Tuple

from robo_reward_ros.recordings.robot_recording import RecordingError, RecordingOptions, canonical_type
from robo_reward_ros.recordings.typestore import kilted_typestore

CONTEXT_TOPICS = ("/instruction", "/episode")
TRUTH_TOPIC = "/ground_truth"
EPISODE_TOPIC = "/episode"
STRING_TYPE = "std_msgs/msg/String"


@dataclasses.dataclass(frozen=True)
class BagSpanJob:
    """Write frames ``start_frame..end_frame-1`` of ``bag``'s camera, and what was recorded with them, to ``out``."""

    bag: str
    out: str
    start_frame: int
    end_frame: int
    camera_topic: str = ""
    context_topics: Tuple[str, ...] = ()


def find_bag(source: str, episode: str) -> str:
    """Return the bag a ranking row means: the source itself if it is a bag, else ``source/episode``."""
    for path in (source, os.path.join(source, episode), os.path.join(source, episode + ".mcap")):
        if os.path.isdir(path) and os.path.isfile(os.path.join(path, "metadata.yaml")):
            return path
        if os.path.isfile(path) and path.endswith(".mcap"):
            return path
    raise RecordingError(f"{source}: no bag for episode {episode!r} (neither the source itself nor "
                         f"{os.path.join(source, episode)} is a rosbag2 folder or .mcap file)")


def _camera_topic(bag: str, connections, topic: str) -> str:
    from robo_reward_ros.recordings.robot_recording import _camera_topics
    return _camera_topics(bag, connections, RecordingOptions(camera_topics=(topic,) if topic else ()))[0]


def _cdr_stamp_ns(raw: bytes) -> int:
    """Return the header stamp of a serialised Image or CompressedImage (its first field), without decoding it."""
    endian = "<" if raw[1] == 1 else ">"
    sec, nanosec = struct.unpack_from(endian + "iI", raw, 4)
    return sec * 1_000_000_000 + nanosec


def _is_transient_local(conn) -> bool:
    profiles = getattr(conn.ext, "offered_qos_profiles", None) or []
    for profile in profiles:
        durability = getattr(profile, "durability", None)
        if durability is not None and "TRANSIENT_LOCAL" in str(getattr(durability, "name", durability)).upper():
            return True
    return False


def write_bag_span(job: BagSpanJob) -> Dict[str, object]:
    """Write one span's bag (MCAP storage); return what it holds: frames, messages per topic, times."""
    from rosbags.rosbag2 import Reader, StoragePlugin, Writer
    if os.path.lexists(job.out):
        raise FileExistsError(f"{job.out} exists: choose a new folder for the filtered bags")
    try:
        reader = Reader(job.bag)
        reader.open()
    except Exception as exc:  # rosbags raises several types for a damaged or absent bag
        raise RecordingError(f"{job.bag}: cannot open the recording ({type(exc).__name__}: {exc})") from exc
    try:
        connections = list(reader.connections)
        topic = _camera_topic(job.bag, connections, job.camera_topic)
        cameras = [c for c in connections if c.topic == topic]
        total = sum(c.msgcount for c in cameras)
        if job.end_frame > total:
            raise RecordingError(f"{job.bag}: {topic} has {total} frames; the span [{job.start_frame}, "
                                 f"{job.end_frame}) reaches past its end")
        first_log = last_log = first_stamp = origin_stamp = None
        for position, (_, log_ns, raw) in enumerate(reader.messages(connections=cameras)):
            if position == 0:
                origin_stamp = _cdr_stamp_ns(raw)
            if position == job.start_frame:
                first_log, first_stamp = log_ns, _cdr_stamp_ns(raw)
            if position == job.end_frame - 1:
                last_log, last_stamp = log_ns, _cdr_stamp_ns(raw)
                break
        lower = first_log if job.start_frame > 0 else None
        upper = last_log + 1 if job.end_frame < total else None
        context = set(CONTEXT_TOPICS) | set(job.context_topics)
        context_conns = [c for c in connections if c.topic != topic and (c.topic in context or _is_transient_local(c))]
        carried: Dict[str, Tuple[object, bytes]] = {}
        if lower is not None and context_conns:
            for conn, _, raw in reader.messages(connections=context_conns, stop=lower):
                carried[conn.topic] = (conn, raw)
        own_layout = any(c.topic in (EPISODE_TOPIC, TRUTH_TOPIC) for c in connections)
        name = os.path.basename(os.path.normpath(job.out))
        counts: Dict[str, int] = {}
        os.makedirs(os.path.dirname(os.path.abspath(job.out)), exist_ok=True)
        with Writer(job.out, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP) as writer:
            targets: Dict[Tuple[str, str], object] = {}

            def target(conn):
                key = (conn.topic, conn.msgtype)
                if key not in targets:
                    targets[key] = _copy_connection(writer, conn)
                return targets[key]

            start_log = first_log if lower is not None else None
            for conn, raw in carried.values():
                writer.write(target(conn), start_log, _rewritten(conn, raw, job, name, own_layout))
                counts[conn.topic] = counts.get(conn.topic, 0) + 1
            for conn, log_ns, raw in reader.messages(start=lower, stop=upper):
                writer.write(target(conn), log_ns, _rewritten(conn, raw, job, name, own_layout))
                counts[conn.topic] = counts.get(conn.topic, 0) + 1
    except RecordingError:
        raise
    except (OSError, ValueError) as exc:
        raise RecordingError(f"{job.bag}: writing {job.out} failed ({type(exc).__name__}: {exc})") from exc
    finally:
        reader.close()
    frames = counts.get(topic, 0)
    if frames != job.end_frame - job.start_frame:
        raise RecordingError(f"{job.bag}: {frames} frames of {topic} in the span [{job.start_frame}, "
                             f"{job.end_frame}), expected {job.end_frame - job.start_frame} (frames sharing a "
                             f"log time with the span's edges?)")
    return {"bag": job.out, "camera_topic": topic, "frames": frames, "messages": dict(sorted(counts.items())),
            "start_time": (first_stamp - origin_stamp) / 1e9, "end_time": (last_stamp - origin_stamp) / 1e9}


def _copy_connection(writer, conn):
    """Add a connection like ``conn`` (type, definition, QoS) to ``writer``."""
    ext = conn.ext
    serialization = getattr(ext, "serialization_format", "cdr") or "cdr"
    qos = getattr(ext, "offered_qos_profiles", None) or ()
    msgdef = getattr(conn.msgdef, "data", "") if conn.msgdef is not None else ""
    definition_format = str(getattr(getattr(conn.msgdef, "format", None), "name", "")).upper()
    if msgdef and definition_format in ("", "MSG"):
        return writer.add_connection(conn.topic, conn.msgtype, msgdef=msgdef, rihs01=conn.digest,
                                     serialization_format=serialization, offered_qos_profiles=qos)
    store = kilted_typestore()
    msgtype = canonical_type(conn.msgtype)
    if msgtype not in store.types:
        raise RecordingError(f"{conn.topic}: type {conn.msgtype} comes without a message definition the "
                             f"writer can use")
    return writer.add_connection(conn.topic, msgtype, typestore=store, serialization_format=serialization,
                                 offered_qos_profiles=qos)


def _rewritten(conn, raw: bytes, job: BagSpanJob, name: str, own_layout: bool) -> bytes:
    """Return the message as it goes into the span's bag: byte for byte, except the project's frame-numbered rows."""
    if not own_layout or conn.topic not in (TRUTH_TOPIC, EPISODE_TOPIC) or canonical_type(conn.msgtype) != STRING_TYPE:
        return raw
    store = kilted_typestore()
    text = store.deserialize_cdr(raw, STRING_TYPE).data
    try:
        data = json.loads(text)
    except ValueError:
        return raw
    if not isinstance(data, dict):
        return raw
    if conn.topic == TRUTH_TOPIC and isinstance(data.get("frame"), int):
        data["frame"] -= job.start_frame
    elif conn.topic == EPISODE_TOPIC:
        data["span"] = {"bag": os.path.abspath(job.bag), "name": data.get("name"), "start_frame": job.start_frame,
                        "end_frame": job.end_frame}
        data["name"] = name
        if isinstance(data.get("failure_step"), int):
            data["failure_step"] = max(0, data["failure_step"] - job.start_frame)
    else:
        return raw
    String = store.types[STRING_TYPE]
    return bytes(store.serialize_cdr(String(data=json.dumps(data)), STRING_TYPE))


def span_bag_name(episode: str, start_frame: int, end_frame: int, whole: bool) -> str:
    """Return a kept span's bag folder name: the episode's own for a whole one, with the frames otherwise."""
    from robo_reward_ros.recordings.output_paths import safe_file_name
    return safe_file_name(episode if whole else f"{episode}_f{start_frame:06d}-{end_frame:06d}")


def frame_count(bag: str, camera_topic: str = "") -> int:
    """Return how many frames the bag's camera has (from its metadata: nothing is read)."""
    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        connections = list(reader.connections)
        topic = _camera_topic(bag, connections, camera_topic)
        return sum(c.msgcount for c in connections if c.topic == topic)
