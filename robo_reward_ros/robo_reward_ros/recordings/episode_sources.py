# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episodes of bag folders and LeRobot datasets named by small references, with their frames streamed.

Ranking a dataset must not hold it: a reference (source, kind, episode) is all that is listed up
front or sent to a Ray worker, and an episode's frames are decoded one at a time when it is scored
(LeRobot: PyAV from the episode's span of the mp4; bags: the camera messages as rosbags reads
them), each downscaled to ``max_pixels`` as the node's intake does.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Iterator, List, Optional, Sequence

from robo_reward_ros.core.frame import Frame

KINDS = ("lerobot", "bag")


@dataclasses.dataclass(frozen=True)
class EpisodeRef:
    """One episode: ``source`` is the dataset root or the bag folder (absolute)."""

    source: str
    kind: str  # "lerobot" or "bag"
    episode: str  # LeRobot episode index as a decimal string, or the bag folder's name


@dataclasses.dataclass(frozen=True)
class SourceOptions:
    """Which camera to read: a LeRobot video key, a bag's camera topic (defaults: the first / the bag's own)."""

    camera_key: str = ""
    camera_topic: str = ""
    instruction_topic: str = ""

    def reading(self, frames_only: bool = False):
        """Return the bag reading options; ``frames_only``: the instruction is not looked for (nor needed)."""
        from robo_reward_ros.recordings.robot_recording import RecordingOptions
        cameras = (self.camera_topic,) if self.camera_topic else ()
        if frames_only:
            return RecordingOptions(cameras, instruction="(not read)")
        return RecordingOptions(cameras, instruction_topic=self.instruction_topic)


def is_lerobot_dataset(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "meta", "info.json"))


def list_episodes(paths: Sequence[str]) -> List[EpisodeRef]:
    """Return every episode of the named LeRobot datasets and bags (a folder of bags counts), in order.

    Reads only the datasets' episode tables, never a frame.
    """
    from robo_reward_ros.recordings.episode_bag import find_bags
    refs: List[EpisodeRef] = []
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such dataset, bag or folder")
        if is_lerobot_dataset(path):
            from robo_reward_ros.recordings.lerobot_dataset import LeRobotFolder
            root = os.path.abspath(path)
            refs += [EpisodeRef(root, "lerobot", str(e.index)) for e in LeRobotFolder(root).episodes]
        else:
            refs += [EpisodeRef(os.path.abspath(bag), "bag", _bag_name(bag)) for bag in find_bags([path])]
    return refs


def parse_reference(path: str, episode: Optional[int] = None) -> EpisodeRef:
    """Return the reference clip's episode: a bag folder, or a LeRobot dataset with an episode index (default 0)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"--reference {path}: no such bag or dataset")
    if is_lerobot_dataset(path):
        return EpisodeRef(os.path.abspath(path), "lerobot", str(episode or 0))
    if episode:
        raise ValueError(f"--reference-episode is for a LeRobot dataset; {path} is a bag")
    from robo_reward_ros.recordings.episode_bag import find_bags
    bags = find_bags([path])
    if len(bags) != 1:
        raise ValueError(f"--reference {path}: name one bag (that folder holds {len(bags)})")
    return EpisodeRef(os.path.abspath(bags[0]), "bag", _bag_name(bags[0]))


def _bag_name(bag: str) -> str:
    name = os.path.basename(os.path.normpath(bag))
    return name[:-len(".mcap")] if name.endswith(".mcap") and os.path.isfile(bag) else name


class EpisodeReader:
    """Opens sources once per process and streams episodes' frames; LeRobot datasets' tables are kept."""

    def __init__(self, options: SourceOptions = SourceOptions(), max_pixels: int = 50176) -> None:
        self.options = options
        self.max_pixels = max_pixels
        self._datasets = {}

    def dataset(self, root: str):
        if root not in self._datasets:
            from robo_reward_ros.recordings.lerobot_dataset import LeRobotFolder, choose_keys
            dataset = LeRobotFolder(root)
            choose_keys(dataset, [self.options.camera_key] if self.options.camera_key else None)
            self._datasets = {root: dataset}  # one dataset's tables at a time
        return self._datasets[root]

    def instruction(self, ref: EpisodeRef) -> str:
        """Return the episode's own instruction, reading no frame; a multi-stage bag gives its first stage's."""
        if ref.kind == "lerobot":
            dataset = self.dataset(ref.source)
            return dataset.instruction(self._dataset_episode(dataset, ref))
        from robo_reward_ros.recordings.robot_recording import read_recording
        episodes = read_recording(ref.source, self.options.reading())
        try:
            first = next(episodes, None)
            if first is None:
                raise ValueError(f"{ref.source}: no camera frames")
            return first.instructions[0]
        finally:
            episodes.close()

    def frames(self, ref: EpisodeRef) -> Iterator[Frame]:
        """Yield the episode's frames, stamps in seconds from its first frame, one decoded at a time."""
        if ref.kind == "lerobot":
            yield from self._lerobot_frames(ref)
        elif ref.kind == "bag":
            yield from self._bag_frames(ref)
        else:
            raise ValueError(f"unknown source kind {ref.kind!r} (one of {KINDS})")

    def _dataset_episode(self, dataset, ref: EpisodeRef):
        wanted = int(ref.episode)
        for episode in dataset.episodes:
            if episode.index == wanted:
                return episode
        raise ValueError(f"{ref.source}: no episode {ref.episode}")

    def _lerobot_frames(self, ref: EpisodeRef) -> Iterator[Frame]:
        from robo_reward_ros.core.image_decoding import fit_pixels
        dataset = self.dataset(ref.source)
        key = self.options.camera_key or dataset.video_keys[0]
        for stamp, rgb in dataset.frames(self._dataset_episode(dataset, ref), key):
            yield Frame(stamp=float(stamp), rgb=fit_pixels(rgb, self.max_pixels))

    def _bag_frames(self, ref: EpisodeRef) -> Iterator[Frame]:
        from robo_reward_ros.recordings.robot_recording import decode_image, read_recording
        from robo_reward_ros.recordings.typestore import kilted_typestore
        store = kilted_typestore()
        episodes = read_recording(ref.source, self.options.reading(frames_only=True), store)
        try:
            recorded = next(episodes, None)
            if recorded is None:
                return
            topic = recorded.camera_topics[0]
            origin = None
            for message in recorded.messages:
                if message.camera_topic != topic:
                    continue
                msg = message.decode(store)
                stamp_ns = recorded.stamp_ns(message, msg)
                origin = stamp_ns if origin is None else origin
                yield Frame(stamp=(stamp_ns - origin) / 1e9,
                            rgb=decode_image(recorded, topic, msg, self.max_pixels))
        finally:
            episodes.close()

    def clip(self, ref: EpisodeRef, max_frames: int, min_interval_sec: float) -> List[Frame]:
        """Return the whole episode as the node's window would hold it (at most ``max_frames``, evenly thinned)."""
        from robo_reward_ros.core.frame_window import FrameWindow
        window = FrameWindow(max_frames, min_interval_sec)
        for frame in self.frames(ref):
            window.add(frame)
        if not len(window):
            raise ValueError(f"{ref.source}: episode {ref.episode} has no frames")
        return window.snapshot()
