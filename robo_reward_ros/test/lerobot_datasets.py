# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Small LeRobot datasets in the v3.0 layout, written with pyarrow and PyAV.

The layout LeRobot 0.6 writes: ``meta/info.json``, ``meta/tasks.parquet`` (task text as the pandas
index, ``task_index`` column), ``meta/episodes/chunk-000/file-000.parquet``,
``data/chunk-000/file-000.parquet`` (all episodes' rows) and one mp4 per camera key with the
episodes concatenated (H.264, yuv420p, a keyframe every 2 frames as LeRobot encodes). Frames are
painted for the scripted backend (red = progress, green = success probability).
"""
import hashlib
import json
import os
import subprocess
from fractions import Fraction

from scripted_backend import painted

KEYS = ("observation.images.top", "observation.images.wrist")


def _pandas_note(index: str, columns):
    """Return the schema note pandas writes, so pandas (and so LeRobot) reads ``index`` back as the index."""
    fields = [{"name": index, "field_name": index, "pandas_type": "unicode", "numpy_type": "object",
               "metadata": None}]
    fields += [{"name": c, "field_name": c, "pandas_type": "int64", "numpy_type": "int64", "metadata": None}
               for c in columns]
    return json.dumps({"index_columns": [index], "column_indexes": [
        {"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object",
         "metadata": {"encoding": "UTF-8"}}], "columns": fields,
        "creator": {"library": "pyarrow", "version": "26.0.1"}, "pandas_version": "2.2.3"}).encode()


def _write_video(path, images, fps):
    import av
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with av.open(path, "w") as container:
        stream = container.add_stream("libx264", rate=Fraction(fps).limit_denominator())
        stream.width, stream.height = images[0].shape[1], images[0].shape[0]
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": "10", "g": "2", "bf": "0"}
        stream.codec_context.time_base = Fraction(1, int(fps))
        for index, rgb in enumerate(images):
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts = index
            frame.time_base = Fraction(1, int(fps))
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def write_v3_dataset(root, episodes, keys=KEYS, fps=10, size=(48, 64)):
    """Write ``episodes`` ([(task, [(progress, success), ...]), ...]) as a LeRobot v3 dataset at ``root``."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    height, width = size
    tasks = sorted({task for task, _ in episodes})
    rows = {"observation.state": [], "action": [], "timestamp": [], "frame_index": [], "episode_index": [],
            "index": [], "task_index": []}
    meta = []
    images = {key: [] for key in keys}
    index = 0
    for episode_index, (task, values) in enumerate(episodes):
        start = index / fps
        for frame_index, (progress, success) in enumerate(values):
            rows["observation.state"].append([progress, success])
            rows["action"].append([0.1 * frame_index, 0.0])
            rows["timestamp"].append(frame_index / fps)
            rows["frame_index"].append(frame_index)
            rows["episode_index"].append(episode_index)
            rows["index"].append(index)
            rows["task_index"].append(tasks.index(task))
            for number, key in enumerate(keys):  # the wrist camera sees a darker scene
                images[key].append(painted(progress, success, size, blue=10 * number))
            index += 1
        entry = {"episode_index": episode_index, "tasks": [task], "length": len(values),
                 "data/chunk_index": 0, "data/file_index": 0,
                 "dataset_from_index": index - len(values), "dataset_to_index": index}
        for key in keys:
            entry.update({f"videos/{key}/chunk_index": 0, f"videos/{key}/file_index": 0,
                          f"videos/{key}/from_timestamp": start, f"videos/{key}/to_timestamp": index / fps})
        entry.update({"meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0})
        meta.append(entry)
    os.makedirs(os.path.join(root, "meta", "episodes", "chunk-000"), exist_ok=True)
    os.makedirs(os.path.join(root, "data", "chunk-000"), exist_ok=True)
    vector = pa.list_(pa.float32(), 2)
    data = pa.table({
        "observation.state": pa.array(rows["observation.state"], vector),
        "action": pa.array(rows["action"], vector),
        "timestamp": pa.array(rows["timestamp"], pa.float32()),
        **{name: pa.array(rows[name], pa.int64()) for name in ("frame_index", "episode_index", "index",
                                                               "task_index")}})
    pq.write_table(data, os.path.join(root, "data", "chunk-000", "file-000.parquet"))
    pq.write_table(pa.Table.from_pylist(meta), os.path.join(root, "meta", "episodes", "chunk-000",
                                                            "file-000.parquet"))
    task_table = pa.table({"task": tasks, "task_index": pa.array(range(len(tasks)), pa.int64())})
    task_table = task_table.replace_schema_metadata({b"pandas": _pandas_note("task", ["task_index"])})
    pq.write_table(task_table, os.path.join(root, "meta", "tasks.parquet"))
    for key in keys:
        _write_video(os.path.join(root, "videos", key, "chunk-000", "file-000.mp4"), images[key], fps)
    scalar = {"shape": [1], "names": None}
    features = {
        "observation.state": {"dtype": "float32", "shape": [2], "names": ["progress", "success"]},
        "action": {"dtype": "float32", "shape": [2], "names": ["x", "y"]},
        **{key: {"dtype": "video", "shape": [height, width, 3], "names": ["height", "width", "channels"],
                 "info": {"video.fps": fps, "video.height": height, "video.width": width, "video.channels": 3,
                          "video.codec": "h264", "video.pix_fmt": "yuv420p", "video.is_depth_map": False,
                          "has_audio": False}} for key in keys},
        "timestamp": {"dtype": "float32", **scalar},
        **{name: {"dtype": "int64", **scalar} for name in ("frame_index", "episode_index", "index", "task_index")}}
    info = {"codebase_version": "v3.0", "robot_type": "so101", "total_episodes": len(episodes),
            "total_frames": index, "total_tasks": len(tasks), "chunks_size": 1000,
            "data_files_size_in_mb": 100, "video_files_size_in_mb": 200, "fps": fps,
            "splits": {"train": f"0:{len(episodes)}"},
            "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
            "video_path": "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
            "features": features}
    with open(os.path.join(root, "meta", "info.json"), "w") as handle:
        json.dump(info, handle, indent=4)
    return root


def lerobot_python():
    """Return a Python with LeRobot in its own venv (``.venv-lerobot`` or ROBO_REWARD_LEROBOT_PYTHON), or None."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    python = os.environ.get("ROBO_REWARD_LEROBOT_PYTHON") or os.path.join(repo, ".venv-lerobot", "bin", "python")
    if not os.path.isfile(python):
        return None
    probe = subprocess.run([python, "-c", "import lerobot"], capture_output=True, timeout=120)
    return python if probe.returncode == 0 else None


def tree_hashes(root):
    """Map each file under ``root`` (relative path) to its SHA-256: a whole output compared at once."""
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = hashlib.sha256(handle.read()).hexdigest()
    return found
