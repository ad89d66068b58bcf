# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""One MCAP per replayed episode: the camera stream and the node's own messages on the recording's timeline.

Foxglove and PlotJuggler open it and show the video with the reward curve under it. Written with
the rosbags writer as a rosbag2 folder (``OUT/mcap/NAME/NAME_0.mcap`` + ``metadata.yaml``, so
``ros2 bag play`` works too). Topics, as the node publishes them without a namespace:

- the camera topics of the recording, each message copied byte for byte (the project's own bags:
  ``/camera/image_raw`` rgb8);
- ``/reward`` (``robo_reward_msgs/msg/RewardEstimate``): one per camera and step;
- ``/task_state`` (``robo_reward_msgs/msg/TaskState``): at the start and on every status or stage change;
- ``/failure_events`` (``robo_reward_msgs/msg/FailureEvent``): task failures and pipeline faults.

Log time and header stamp of every message are the recording's frame-stamp time, so records come
in time order: each camera message is preceded by every estimate and event up to its stamp.
"""
from __future__ import annotations

import glob
import math
import os
import shutil
from typing import Any, Dict, List, Optional

import numpy as np

from robo_reward_ros.core.stamps import split_nanoseconds
from robo_reward_ros.recordings.output_paths import UnsafeOutputPath, path_inside, safe_file_name
from robo_reward_ros.recordings.typestore import kilted_typestore, rgb8_image_cdr

REWARD_TOPIC = "/reward"
TASK_STATE_TOPIC = "/task_state"
FAILURE_TOPIC = "/failure_events"
MSG_PACKAGE = "robo_reward_msgs"
MESSAGES = ("DecidedBy", "StageSpec", "TaskSpec", "RewardEstimate", "TaskState", "FailureEvent",
            "ResetRequest")
STATUS = {"idle": 0, "running": 1, "stage_succeeded": 2, "succeeded": 3, "failed": 4, "timed_out": 5}
_DECIDER_OF_STATUS = {"idle": "ABORT", "stage_succeeded": "MODEL", "succeeded": "MODEL", "failed": "MODEL",
                      "timed_out": "TIME_LIMIT"}


def _decider_of_failure(record) -> str:
    if not record.terminal:
        return "NONE"
    return "TIME_LIMIT" if (record.kind or "").lower() == "timeout" else "MODEL"


def message_definitions_dir() -> str:
    """Find robo_reward_msgs' .msg files: installed (ament prefixes) or next to this source tree."""
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(p, "share", MSG_PACKAGE, "msg") for p in prefixes]
    candidates.append(os.path.normpath(os.path.join(here, "..", "..", "..", MSG_PACKAGE, "msg")))
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "RewardEstimate.msg")):
            return folder
    raise RuntimeError(f"{MSG_PACKAGE} message definitions not found (looked in {candidates}); "
                       "source the workspace (scripts/env.sh) or run from the source tree")


def typestore_with_messages():
    """Return a Kilted typestore that also knows robo_reward_msgs (parsed from the .msg files)."""
    from rosbags.typesys import get_types_from_msg
    store = kilted_typestore()
    folder = message_definitions_dir()
    types = {}
    for name in MESSAGES:
        with open(os.path.join(folder, name + ".msg")) as handle:
            types.update(get_types_from_msg(handle.read(), f"{MSG_PACKAGE}/msg/{name}"))
    store.register(types)
    return store


def remove_written_bag(path: str) -> None:
    """Remove an MCAP bag an earlier run wrote; refuse anything else found at its place."""
    entries = os.listdir(path) if os.path.isdir(path) and not os.path.islink(path) else None
    if not entries or "metadata.yaml" not in entries or not all(
            (e == "metadata.yaml" or e.endswith(".mcap")) and os.path.isfile(os.path.join(path, e))
            and not os.path.islink(os.path.join(path, e)) for e in entries):
        raise UnsafeOutputPath(f"{path} is in the way and is not an MCAP bag this tool wrote: "
                               "move it, or choose another --out")
    shutil.rmtree(path)


class EpisodeMcap:
    """An episode's MCAP being written; records are flushed in time order before each camera message."""

    def __init__(self, path: str, store, camera_types: Dict[str, str], values: Dict[str, Any]) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer
        self.path = path
        self.store = store
        self.values = values
        if os.path.lexists(path):
            remove_written_bag(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.writer = Writer(path, version=Writer.VERSION_LATEST, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        add = self.writer.add_connection
        self.cameras = {topic: add(topic, msgtype, typestore=store) for topic, msgtype in camera_types.items()}
        self.reward = add(REWARD_TOPIC, f"{MSG_PACKAGE}/msg/RewardEstimate", typestore=store)
        self.state = add(TASK_STATE_TOPIC, f"{MSG_PACKAGE}/msg/TaskState", typestore=store)
        self.failures = add(FAILURE_TOPIC, f"{MSG_PACKAGE}/msg/FailureEvent", typestore=store)
        self.trace = None
        self.origin_ns: Optional[int] = None
        self._estimates = self._events = 0
        self._stage = 0
        self._closed = False

    # --- input --------------------------------------------------------------------------------
    def attach(self, trace) -> None:
        """Follow ``trace``: its estimates and events are written as they appear."""
        self.trace = trace

    def camera(self, message, stamp_ns: int) -> None:
        """Copy a recorded camera message (serialised) at its header stamp."""
        self._start(stamp_ns)
        self.flush(stamp_ns)
        self.writer.write(self.cameras[message.camera_topic], stamp_ns, message.raw)

    def camera_rgb(self, topic: str, stamp_ns: int, rgb: np.ndarray) -> None:
        """Write a decoded frame as rgb8 (episodes held in memory)."""
        self._start(stamp_ns)
        self.flush(stamp_ns)
        self.writer.write(self.cameras[topic], stamp_ns, rgb8_image_cdr(self.store, stamp_ns, rgb, "camera"))

    def finish(self, trace=None) -> None:
        """Write what is left and close the file."""
        if trace is not None:
            self.trace = trace
        if self.origin_ns is None:
            self._start(getattr(self.trace, "origin_ns", 0))
        self.flush(None)
        self._close()

    def abandon(self) -> None:
        """Remove a half-written episode (its replay failed)."""
        if not self._closed:
            self._close()
            shutil.rmtree(self.path, ignore_errors=True)

    # --- records ------------------------------------------------------------------------------
    def flush(self, upto_ns: Optional[int]) -> None:
        """Write the trace's estimates and events with stamps up to ``upto_ns`` (all with None)."""
        if self.trace is None or self.origin_ns is None:
            return
        estimates, events = self.trace.estimates, self.trace.events
        while True:
            next_estimate = estimates[self._estimates] if self._estimates < len(estimates) else None
            next_event = events[self._events] if self._events < len(events) else None
            candidates = [r for r in (next_event, next_estimate) if r is not None]
            if not candidates:
                return
            record = min(candidates, key=lambda r: r.stamp)  # an event first at equal stamps
            stamp_ns = self.origin_ns + int(round(record.stamp * 1e9))
            if upto_ns is not None and stamp_ns > upto_ns:
                return
            if record is next_event:
                self._events += 1
                self._write_event(record, stamp_ns)
            else:
                self._estimates += 1
                self._write_estimate(record, stamp_ns)

    def _start(self, stamp_ns: int) -> None:
        if self.origin_ns is None:
            self.origin_ns = getattr(self.trace, "origin_ns", 0) or stamp_ns
            self._write_state(self.origin_ns, "running", 0, "episode started")

    def _instructions(self) -> List[str]:
        return list(self.trace.summary()["instructions"]) if hasattr(self.trace, "summary_row") else list(
            self.trace.episode.instructions)

    def _name(self) -> str:
        return self.trace.summary_row["name"] if hasattr(self.trace, "summary_row") else self.trace.episode.name

    def _header(self, stamp_ns: int, frame_id: str = ""):
        types = self.store.types
        return types["std_msgs/msg/Header"](stamp=types["builtin_interfaces/msg/Time"](
            *split_nanoseconds(stamp_ns)), frame_id=frame_id)

    def _time(self, seconds: float):
        ns = self.origin_ns + int(round(seconds * 1e9))
        return self.store.types["builtin_interfaces/msg/Time"](*split_nanoseconds(ns))

    def _write_estimate(self, record, stamp_ns: int) -> None:
        msgtype = f"{MSG_PACKAGE}/msg/RewardEstimate"
        instructions = self._instructions()
        success = record.success_prob
        msg = self.store.types[msgtype](
            header=self._header(stamp_ns), episode_id=self._name(), stage_index=record.stage,
            instruction=instructions[min(record.stage, len(instructions) - 1)], camera=record.camera,
            progress=float(record.progress), reward=float(record.reward),
            has_success_probability=success is not None,
            success_probability=float("nan") if success is None else float(success),
            success=bool(record.stage_succeeded),
            frame_progress=np.asarray(record.frame_progress, dtype=np.float32),
            frame_success_probability=np.asarray(record.frame_success, dtype=np.float32),
            frame_stamps=[self._time(s) for s in record.frame_stamps],
            backend=str(self.values.get("model.backend", "")), model_id=str(self.values.get("model.id", "")),
            precision=str(self.values.get("model.precision", "")),
            inference_latency_sec=float(record.latency_s or 0.0))
        self.writer.write(self.reward, stamp_ns, self.store.serialize_cdr(msg, msgtype))

    def _write_event(self, record, stamp_ns: int) -> None:
        from robo_reward_ros.core.events import FailureKind
        last = len(self._instructions()) - 1
        if record.type == "failure":
            msgtype = f"{MSG_PACKAGE}/msg/FailureEvent"
            msg = self.store.types[msgtype](
                header=self._header(stamp_ns), episode_id=self._name(), stage_index=record.stage,
                kind=int(FailureKind[record.kind.upper()]) if record.kind else 0,
                severity=2 if record.terminal else 1, terminal=bool(record.terminal),
                task_failure=bool(record.task_failure), progress=math.nan, description=record.text,
                decided_by=self._decided_by(_decider_of_failure(record)))
            self.writer.write(self.failures, stamp_ns, self.store.serialize_cdr(msg, msgtype))
        elif record.type == "stage_succeeded" and record.stage < last:
            self._write_state(stamp_ns, "stage_succeeded", record.stage, record.text)
            self._write_state(stamp_ns, "running", record.stage + 1, f"stage {record.stage + 1} started")
        elif record.type == "episode_ended":
            self._write_state(stamp_ns, record.status or "idle", record.stage, record.text)

    def _write_state(self, stamp_ns: int, status: str, stage: int, reason: str) -> None:
        msgtype = f"{MSG_PACKAGE}/msg/TaskState"
        instructions = self._instructions()
        msg = self.store.types[msgtype](
            header=self._header(stamp_ns), episode_id=self._name(), stage_index=stage,
            stage_count=len(instructions), instruction=instructions[min(stage, len(instructions) - 1)],
            status=STATUS.get(status, 0), reason=reason,
            decided_by=self._decided_by(_DECIDER_OF_STATUS.get(status, "NONE")),
            intervention_active=False, pending_success=False)
        self.writer.write(self.state, stamp_ns, self.store.serialize_cdr(msg, msgtype))

    def _decided_by(self, source: str):
        """Return the DecidedBy message of a replay's decision: the model's or a time limit's, never an operator's."""
        from robo_reward_ros.core.events import DecidedBy
        return self.store.types[f"{MSG_PACKAGE}/msg/DecidedBy"](source=int(DecidedBy[source]), name="")

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            self.writer.close()


class EpisodeMcapWriter:
    """Makes one EpisodeMcap per episode under ``OUT/mcap``; what ``replay --mcap`` hands the replay."""

    def __init__(self, folder: str, values: Dict[str, Any]) -> None:
        self.folder = folder
        self.values = values
        self.store = typestore_with_messages()
        self.written: List[str] = []

    def path(self, name: str) -> str:
        return path_inside(self.folder, safe_file_name(name))

    def exists(self, name: str) -> bool:
        return bool(glob.glob(os.path.join(self.path(name), "*.mcap")))

    def open(self, recorded) -> EpisodeMcap:
        """Start a streamed episode's MCAP; the replay attaches its trace and feeds camera messages."""
        from robo_reward_ros.recordings.robot_recording import COMPRESSED_TYPE, IMAGE_TYPE
        types = {t: COMPRESSED_TYPE if recorded.compressed[t] else IMAGE_TYPE for t in recorded.camera_topics}
        episode = EpisodeMcap(self.path(recorded.name), self.store, types, self.values)
        self.written.append(episode.path)
        return episode

    def write_episode(self, trace) -> str:
        """Write an episode held in memory (the project's own bags): frames as rgb8 on /camera/image_raw."""
        from robo_reward_ros.recordings.episode_bag import BASE_STAMP_NS, IMAGE_TOPIC, IMAGE_TYPE
        episode = EpisodeMcap(self.path(trace.episode.name), self.store, {IMAGE_TOPIC: IMAGE_TYPE},
                              self.values)
        trace.origin_ns = trace.origin_ns or BASE_STAMP_NS
        episode.attach(trace)
        try:
            for frame in trace.episode.frames:
                episode.camera_rgb(IMAGE_TOPIC, trace.origin_ns + int(round(frame.stamp * 1e9)), frame.rgb)
            episode.finish()
        except BaseException:
            episode.abandon()
            raise
        self.written.append(episode.path)
        return episode.path
