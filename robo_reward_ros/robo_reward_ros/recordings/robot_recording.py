# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Any rosbag2 recording (MCAP or sqlite3) as episodes whose camera messages stream one by one.

A robot team's bags have their own topic names, several cameras, compressed images and often
several episodes in one bag. The options below say which topics are what; nothing is decoded
here: each camera message is handed over still serialised, and the replay decodes it through the
node's own frame intake (the same encodings, image_transport format strings and downscaling as
live), so memory holds the frame window, not the bag.

Episode boundaries use the recorder's log times (one clock for every topic): a message on
``split_topic`` starts a new episode, and so does a camera silence longer than ``split_gap_sec``.
Small topics (instruction, split) are read in a first pass; the cameras in the second.
"""
from __future__ import annotations

import bisect
import dataclasses
import json
import os
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from robo_reward_ros.core.task_spec import TaskSpec, build_task
from robo_reward_ros.core.stamps import to_nanoseconds
from robo_reward_ros.recordings.typestore import kilted_typestore

IMAGE_TYPE = "sensor_msgs/msg/Image"
COMPRESSED_TYPE = "sensor_msgs/msg/CompressedImage"
IMAGE_TYPES = (IMAGE_TYPE, COMPRESSED_TYPE)
STRING_TYPE = "std_msgs/msg/String"
DEFAULT_CAMERA_TOPIC = "/camera/image_raw"
DEFAULT_INSTRUCTION_TOPIC = "/instruction"
STAMP_SOURCES = ("header", "receive")  # a frame's time: its header stamp, or the recorder's log time


def canonical_type(msgtype: str) -> str:
    """Spell a message type as rosbags' typestore does: ``pkg/msg/Type``.

    Some writers, and bags converted from ROS 1, store ``pkg/Type`` (and the ROS 1 converter may
    add ``pkg/msg/Type`` with a trailing ``.msg``); the bytes are the same CDR either way.
    """
    name = msgtype.strip()
    if name.endswith(".msg"):
        name = name[:-len(".msg")]
    parts = name.split("/")
    return f"{parts[0]}/msg/{parts[1]}" if len(parts) == 2 else name


class RecordingError(ValueError):
    """A recording cannot be (fully) read; the message names the bag and the topic."""


@dataclasses.dataclass(frozen=True)
class RecordingOptions:
    """How to read a robot's own recording; empty fields mean "as the project's bags do"."""

    camera_topics: Tuple[str, ...] = ()
    instruction: str = ""
    instruction_topic: str = ""
    task_file: str = ""
    split_topic: str = ""
    split_gap_sec: float = 0.0
    max_frames: Optional[int] = None  # per camera and episode
    stamps: str = "header"  # or "receive": the recorder's log time stands in for header stamps

    def __post_init__(self) -> None:
        if self.stamps not in STAMP_SOURCES:
            raise ValueError(f"stamps must be one of {STAMP_SOURCES}, not {self.stamps!r}")

    def describe(self) -> Dict[str, object]:
        """Return what decides the episodes' contents (part of a scored episode's identity)."""
        values = dataclasses.asdict(self)
        values["camera_topics"] = list(self.camera_topics)
        if self.task_file:
            with open(self.task_file) as handle:
                values["task_file_text"] = handle.read()
        return values


def load_task_file(path: str) -> TaskSpec:
    """Read a task from YAML: a list of instructions, or a mapping with robo_reward_msgs/TaskSpec's fields.

    ``{stages: [{instruction, timeout_sec, success_threshold}], episode_timeout_sec}``.
    """
    import yaml
    with open(path) as handle:
        data = yaml.safe_load(handle)
    if isinstance(data, list):
        data = {"stages": data}
    if not isinstance(data, dict) or not isinstance(data.get("stages"), list):
        raise ValueError(f"{path}: expected a list of stages or a mapping with 'stages'")
    stages = [s if isinstance(s, dict) else {"instruction": s} for s in data["stages"]]
    return build_task([s.get("instruction", "") for s in stages],
                      [float(s.get("timeout_sec", 0.0)) for s in stages],
                      [float(s.get("success_threshold", 0.0)) for s in stages],
                      float(data.get("episode_timeout_sec", 0.0)))


@dataclasses.dataclass(frozen=True)
class CameraMessage:
    """One camera message, still serialised; ``log_ns`` is when the recorder received it."""

    camera_topic: str
    msgtype: str
    log_ns: int
    raw: bytes

    def decode(self, typestore):
        return typestore.deserialize_cdr(self.raw, self.msgtype)


@dataclasses.dataclass
class RecordedEpisode:
    """One episode of a recording; iterate ``messages`` once, in log-time order."""

    name: str
    bag: str
    index: int
    task: TaskSpec
    camera_topics: Tuple[str, ...]
    compressed: Dict[str, bool]
    messages: Iterator[CameraMessage]
    info: Dict[str, object] = dataclasses.field(default_factory=dict)
    receive_stamps: bool = False

    @property
    def instructions(self) -> Tuple[str, ...]:
        return tuple(stage.instruction for stage in self.task.stages)

    def stamp_ns(self, message: CameraMessage, msg) -> int:
        """Return a camera message's time: its header stamp, or the recorder's receive time if so chosen."""
        if self.receive_stamps:
            return message.log_ns
        return to_nanoseconds(msg.header.stamp)


def is_own_layout(bag: str) -> bool:
    """Tell a bag written by ``sim-bags``/``video-bags`` (it carries /episode metadata and maybe truth)."""
    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        return any(c.topic in ("/episode", "/ground_truth") for c in reader.connections)


def camera_message_count(bag: str, options: RecordingOptions) -> int:
    """Camera messages the bag holds (from its metadata: no reading), for progress bars."""
    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        topics = _camera_topics(bag, reader.connections, options)
        return sum(c.msgcount for c in reader.connections if c.topic in topics)


def read_recording(bag: str, options: RecordingOptions, store=None) -> Iterator[RecordedEpisode]:
    """Episodes of ``bag`` in order; each must be consumed (or abandoned) before the next is asked for.

    Raises RecordingError (bag and topic named) when a topic is missing or the file cannot be read;
    episodes yielded before that stay valid.
    """
    from rosbags.rosbag2 import Reader
    store = store or kilted_typestore()
    try:
        reader = Reader(bag)
        reader.open()
    except Exception as exc:  # rosbags raises several types for a damaged or absent bag
        raise RecordingError(f"{bag}: cannot open the recording ({type(exc).__name__}: {exc})") from exc
    try:
        connections = list(reader.connections)
        camera_topics = _camera_topics(bag, connections, options)
        cameras = [c for c in connections if c.topic in camera_topics]
        compressed = {t: next(canonical_type(c.msgtype) for c in cameras if c.topic == t) == COMPRESSED_TYPE
                      for t in camera_topics}
        instructions = _instruction_messages(bag, reader, connections, options, store)
        splits = _split_stamps(bag, reader, connections, options, store)
        task_from_file = load_task_file(options.task_file) if options.task_file else None
        split_episodes = bool(options.split_topic or options.split_gap_sec > 0)
        stream = _Peekable(_camera_stream(bag, reader, cameras))
        index = 0
        while stream.peek() is not None:
            first = stream.peek()
            end = _next_split(splits, first.log_ns)
            name = (f"{_bag_name(bag)}_e{index:03d}" if split_episodes
                    else _bag_name(bag))
            task = task_from_file or _task_at(bag, options, instructions, first.log_ns)
            episode = RecordedEpisode(
                name=name, bag=bag, index=index, task=task, camera_topics=camera_topics,
                compressed=compressed,
                messages=_episode_messages(stream, end, options.split_gap_sec, options.max_frames),
                info={"bag": os.path.abspath(bag), "episode_index": index,
                      "camera_topics": list(camera_topics), "first_log_ns": first.log_ns},
                receive_stamps=options.stamps == "receive")
            yield episode
            for _ in episode.messages:  # what the consumer left (an episode it skipped)
                pass
            index += 1
    finally:
        reader.close()


def _bag_name(bag: str) -> str:
    name = os.path.basename(os.path.normpath(bag))
    return name[:-len(".mcap")] if name.endswith(".mcap") and os.path.isfile(bag) else name


def _camera_topics(bag: str, connections, options: RecordingOptions) -> Tuple[str, ...]:
    types = {c.topic: canonical_type(c.msgtype) for c in connections}
    image_topics = sorted(topic for topic, msgtype in types.items() if msgtype in IMAGE_TYPES)
    if options.camera_topics:
        for topic in options.camera_topics:
            if topic not in types:
                raise RecordingError(f"{bag}: camera topic {topic} is not in the recording "
                                     f"(image topics there: {image_topics or 'none'})")
            if types[topic] not in IMAGE_TYPES:
                raise RecordingError(f"{bag}: camera topic {topic} is {types[topic]}; a camera "
                                     f"must be {IMAGE_TYPE} or {COMPRESSED_TYPE}")
        return tuple(options.camera_topics)
    if DEFAULT_CAMERA_TOPIC in image_topics:
        return (DEFAULT_CAMERA_TOPIC,)
    if len(image_topics) == 1:
        return (image_topics[0],)
    raise RecordingError(f"{bag}: which camera? pass --camera-topic (image topics there: "
                         f"{image_topics or 'none'})")


def _string_messages(bag: str, reader, connections, topic: str, store) -> List[Tuple[int, str]]:
    conns = [c for c in connections if c.topic == topic]
    if not conns:
        raise RecordingError(f"{bag}: topic {topic} is not in the recording")
    if any(canonical_type(c.msgtype) != STRING_TYPE for c in conns):
        raise RecordingError(f"{bag}: topic {topic} is {conns[0].msgtype}; instructions must be "
                             f"{STRING_TYPE}")
    try:
        return [(log_ns, store.deserialize_cdr(raw, STRING_TYPE).data)
                for _, log_ns, raw in reader.messages(connections=conns)]
    except Exception as exc:
        raise RecordingError(f"{bag}: reading topic {topic} failed ({type(exc).__name__}: {exc})") from exc


def _instruction_messages(bag, reader, connections, options, store) -> List[Tuple[int, str]]:
    if options.task_file or options.instruction:
        return []
    topic = options.instruction_topic
    if not topic:
        if not any(c.topic == DEFAULT_INSTRUCTION_TOPIC for c in connections):
            raise RecordingError(f"{bag}: no instruction: pass --instruction, --instruction-topic "
                                 f"or --task-file (no {DEFAULT_INSTRUCTION_TOPIC} topic)")
        topic = DEFAULT_INSTRUCTION_TOPIC
    found = [(t, text) for t, text in _string_messages(bag, reader, connections, topic, store)
             if text.strip()]
    if not found:
        raise RecordingError(f"{bag}: topic {topic} has no instruction message")
    return found


def _split_stamps(bag, reader, connections, options, store) -> List[int]:
    if not options.split_topic:
        return []
    conns = [c for c in connections if c.topic == options.split_topic]
    if not conns:
        raise RecordingError(f"{bag}: split topic {options.split_topic} is not in the recording")
    try:
        return sorted(log_ns for _, log_ns, _ in reader.messages(connections=conns))
    except Exception as exc:
        raise RecordingError(f"{bag}: reading topic {options.split_topic} failed "
                             f"({type(exc).__name__}: {exc})") from exc


def _task_at(bag: str, options: RecordingOptions, instructions: Sequence[Tuple[int, str]],
             log_ns: int) -> TaskSpec:
    """Return the --instruction, else the newest instruction message at the episode's start (or the first one)."""
    if options.instruction:
        return build_task([options.instruction])
    stamps = [t for t, _ in instructions]
    position = bisect.bisect_right(stamps, log_ns) - 1
    text = instructions[max(position, 0)][1]
    try:
        data = json.loads(text)  # a task as JSON (the TaskSpec fields), else plain text
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("stages"), list):
        return build_task([s["instruction"] if isinstance(s, dict) else s for s in data["stages"]])
    return build_task([text])


def _next_split(splits: Sequence[int], log_ns: int) -> Optional[int]:
    position = bisect.bisect_right(splits, log_ns)
    return splits[position] if position < len(splits) else None


def _camera_stream(bag: str, reader, cameras) -> Iterator[CameraMessage]:
    topic = cameras[0].topic if len(cameras) == 1 else "the camera topics"
    try:
        for conn, log_ns, raw in reader.messages(connections=cameras):
            topic = conn.topic
            yield CameraMessage(conn.topic, canonical_type(conn.msgtype), log_ns, raw)
    except Exception as exc:  # a truncated or corrupt storage file
        raise RecordingError(f"{bag}: reading stopped after a message on {topic} "
                             f"({type(exc).__name__}: {exc})") from exc


def _episode_messages(stream: "_Peekable", end: Optional[int], gap_sec: float,
                      max_frames: Optional[int]) -> Iterator[CameraMessage]:
    gap_ns = int(gap_sec * 1e9) if gap_sec > 0 else None
    last: Optional[int] = None
    counts: Dict[str, int] = {}
    while True:
        message = stream.peek()
        if message is None or (end is not None and message.log_ns >= end):
            return
        if gap_ns is not None and last is not None and message.log_ns - last > gap_ns:
            return
        stream.next()
        last = message.log_ns
        counts[message.camera_topic] = counts.get(message.camera_topic, 0) + 1
        if max_frames is None or counts[message.camera_topic] <= max_frames:
            yield message


class _Peekable:
    """An iterator with one message of look-ahead (the first message of the next episode)."""

    _EMPTY = object()

    def __init__(self, iterator: Iterator[CameraMessage]) -> None:
        self._iterator = iterator
        self._head = self._EMPTY

    def peek(self) -> Optional[CameraMessage]:
        if self._head is self._EMPTY:
            self._head = next(self._iterator, None)
        return self._head

    def next(self) -> Optional[CameraMessage]:
        head = self.peek()
        self._head = self._EMPTY
        return head


def decoded_episodes(bag: str, options: RecordingOptions, max_pixels: int,
                     only: Optional[int] = None) -> Iterator[Tuple[RecordedEpisode, list]]:
    """Each episode of ``bag`` (or just episode ``only``) with one camera's frames decoded into memory.

    For what needs whole episodes (score, finetune, eval's preference clips), not for replay. The
    first of ``options.camera_topics`` (or the default camera); stamps in seconds from the
    episode's first frame, replay's time base; each frame downscaled to ``max_pixels`` as the
    node's intake does. An episode without a frame of that camera raises RecordingError.
    """
    from robo_reward_ros.core.frame import Frame
    store = kilted_typestore()
    found = False
    for recorded in read_recording(bag, options, store):
        if only is not None and recorded.index != only:
            continue  # read_recording skips its messages without decoding them
        found = True
        topic = recorded.camera_topics[0]
        frames = []
        for message in recorded.messages:
            if message.camera_topic != topic:
                continue
            msg = message.decode(store)
            stamp = recorded.stamp_ns(message, msg) / 1e9
            frames.append(Frame(stamp=stamp, rgb=decode_image(recorded, message.camera_topic, msg, max_pixels)))
        if not frames:
            raise RecordingError(f"{bag}: topic {topic} has no frames in episode {recorded.index}")
        origin = frames[0].stamp
        yield recorded, [Frame(stamp=f.stamp - origin, rgb=f.rgb) for f in frames]
        if only is not None:
            return
    if only is not None and not found:
        raise RecordingError(f"{bag}: no episode {only}")


def decode_image(recorded: RecordedEpisode, topic: str, msg, max_pixels: int):
    """Return one deserialised camera message's RGB image, downscaled to ``max_pixels`` as the node's intake does."""
    from robo_reward_ros.core.image_decoding import decode_compressed, decode_raw
    if recorded.compressed[topic]:
        return decode_compressed(msg.format, msg.data, max_pixels=max_pixels)
    return decode_raw(msg.encoding, msg.height, msg.width, msg.step, msg.data, max_pixels=max_pixels)


def episode_frames(bag: str, options: RecordingOptions, max_pixels: int, episode: int = 0):
    """Episode ``episode`` of ``bag``: (RecordedEpisode, frames), see decoded_episodes."""
    return next(decoded_episodes(bag, options, max_pixels, only=episode))
