# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Robot-style rosbag2 recordings written with the rosbags writer.

The team's own topic names, several cameras, raw and compressed images, several episodes per bag.

Frames are painted for the scripted backend (scripted_backend.painted): red = progress, green =
success probability, so a test knows what the replay must report. Episodes are separated by a
camera silence of ``gap_sec`` and announced on ``split_topic`` when one is given.
"""
import io
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

from scripted_backend import painted

BASE_NS = 1_750_000_000 * 10**9
JPEG_FORMAT = "rgb8; jpeg compressed bgr8"  # what image_transport's compressed plugin writes


def encode(kind: str, rgb: np.ndarray) -> Tuple[str, bytes]:
    """Encode a frame the way a camera driver publishes it: (encoding or format string, bytes)."""
    from PIL import Image
    if kind == "rgb8":
        return "rgb8", rgb.tobytes()
    if kind == "bgr8":
        return "bgr8", np.ascontiguousarray(rgb[:, :, ::-1]).tobytes()
    if kind in ("jpeg", "png"):
        buffer = io.BytesIO()
        Image.fromarray(rgb).save(buffer, format=kind.upper(), quality=95)
        return (JPEG_FORMAT if kind == "jpeg" else "png"), buffer.getvalue()
    return kind, rgb.tobytes()  # an encoding no decoder knows


def write_recording(path: str, cameras: Dict[str, str], episodes: Sequence[Tuple[str, Sequence]],
                    fps: float = 10.0, gap_sec: float = 5.0, storage: str = "mcap",
                    instruction_topic: Optional[str] = "/task", split_topic: Optional[str] = None,
                    size=(48, 64), short_type_names: bool = False,
                    zero_stamps: bool = False) -> str:
    """Write a bag; ``cameras``: topic -> rgb8 | bgr8 | jpeg | png | anything else (undecodable).

    ``episodes``: (instruction, [(progress, success), ...]) each. ``short_type_names`` stores the
    types as ``sensor_msgs/Image`` (no ``/msg/``), as some writers and ROS 1 conversions do;
    ``zero_stamps`` leaves every header stamp 0, as a driver that does not stamp its frames.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_KILTED)
    types = store.types
    Header, Time = types["std_msgs/msg/Header"], types["builtin_interfaces/msg/Time"]
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    with Writer(path, version=Writer.VERSION_LATEST, storage_plugin=plugin) as writer:
        def connect(topic: str, msgtype: str):
            if not short_type_names:
                return writer.add_connection(topic, msgtype, typestore=store)
            msgdef, _ = store.generate_msgdef(msgtype)
            return writer.add_connection(topic, msgtype.replace("/msg/", "/"), msgdef=msgdef,
                                         rihs01=store.hash_rihs01(msgtype))

        conns = {}
        for topic, kind in cameras.items():
            msgtype = ("sensor_msgs/msg/CompressedImage" if kind in ("jpeg", "png") or
                       topic.endswith("/compressed") else "sensor_msgs/msg/Image")
            conns[topic] = (connect(topic, msgtype), msgtype, kind)
        text_conn = connect(instruction_topic, "std_msgs/msg/String") if instruction_topic else None
        split_conn = connect(split_topic, "std_msgs/msg/String") if split_topic else None
        t = 0.0
        for index, (instruction, values) in enumerate(episodes):
            start = BASE_NS + int(round(t * 1e9))
            for conn, text in ((text_conn, instruction), (split_conn, f"episode {index}")):
                if conn is not None:
                    msg = types["std_msgs/msg/String"](data=text)
                    writer.write(conn, start, store.serialize_cdr(msg, "std_msgs/msg/String"))
            for progress, success in values:
                stamp = BASE_NS + int(round(t * 1e9))
                header_ns = 0 if zero_stamps else stamp
                header = Header(stamp=Time(sec=header_ns // 10**9, nanosec=header_ns % 10**9),
                                frame_id="cam")
                rgb = painted(progress, success, size)
                for topic, (conn, msgtype, kind) in conns.items():
                    fmt, data = encode(kind, rgb)
                    array = np.frombuffer(data, dtype=np.uint8)
                    if msgtype.endswith("CompressedImage"):
                        msg = types[msgtype](header=header, format=fmt, data=array)
                    else:
                        msg = types[msgtype](header=header, height=size[0], width=size[1], encoding=fmt,
                                             is_bigendian=0, step=len(data) // size[0], data=array)
                    writer.write(conn, stamp, store.serialize_cdr(msg, msgtype))
                t += 1.0 / fps
            t += gap_sec
    return path


def ramp(count: int, end: float = 1.0, success_from: Optional[int] = None):
    """Progress rising linearly to ``end``; success probability 0.95 from frame ``success_from``."""
    return [(end * i / max(1, count - 1), 0.95 if success_from is not None and i >= success_from else 0.05)
            for i in range(count)]
