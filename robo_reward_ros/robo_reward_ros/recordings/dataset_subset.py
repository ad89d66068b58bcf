# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A new LeRobot v3 dataset made of chosen episodes, or spans of episodes, of existing ones.

The reward model ranks spans; training wants them as a dataset LeRobot loads like any other. A
span is not a byte range of the source: each kept span becomes a new episode (episode_index
0..n-1, frame_index and timestamp from 0, ``index`` contiguous over the dataset, task indices of
the kept tasks only), and LeRobot finds a frame by ``from_timestamp + timestamp`` in the episode's
video file. So the kept frames are decoded and encoded again (the source's codec where PyAV has
an encoder for it, else H.264; fps, size and pixel format kept, a keyframe every 2 frames as
LeRobot encodes), one segment per episode and camera key, and the segments are joined into the
dataset's video files packet by packet with their times shifted. Encoding a segment needs only
the source and the span, so it is the part that can run anywhere (``--ray``); joining, the data
rows and the metadata are written by one process in episode order.

Memory holds one episode's rows and one decoded frame at a time: the rows of a source file are
read a row group at a time (one row group is kept for the next span of the same group), frames
stream from decoder to encoder, and the per-episode statistics are running sums and 256-bin
histograms. The statistics are recomputed for the kept frames: the per-episode ``stats/...``
columns always, ``meta/stats.json`` (which LeRobot's normalisers read) where the source had one.
"""
from __future__ import annotations

import bisect
import dataclasses
import functools
import json
import os
import shutil
from fractions import Fraction
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from robo_reward_ros.recordings.lerobot_dataset import DatasetError, LeRobotFolder

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
QUANTILE_KEYS = tuple(f"q{int(q * 100):02d}" for q in QUANTILES)
ENCODERS = {"h264": "libx264", "avc1": "libx264", "hevc": "libx265", "h265": "libx265", "av1": "libsvtav1"}
DEFAULT_CRF = {"libx264": 18, "libx265": 20, "libsvtav1": 25}
REWRITTEN_COLUMNS = ("index", "episode_index", "frame_index", "timestamp", "task_index")
DEFAULT_DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
DEFAULT_VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"


@dataclasses.dataclass(frozen=True)
class EpisodePlan:
    """One episode of the new dataset: which frames of which source episode, and the task its rows get."""

    new_index: int
    source: str  # the source dataset's root
    source_episode: int
    start_frame: int
    end_frame: int
    task: Optional[str] = None  # None: the rows keep the source's tasks

    @property
    def length(self) -> int:
        return self.end_frame - self.start_frame


@dataclasses.dataclass(frozen=True)
class SegmentJob:
    """Encode one episode's frames of one camera key into ``path`` (a whole small mp4)."""

    plan: EpisodePlan
    key: str
    path: str
    crf: Optional[int] = None


def open_sources(roots: Iterable[str]) -> Dict[str, LeRobotFolder]:
    """Open every source dataset; refuse sources that cannot share one dataset (fps, features)."""
    folders = {root: _opened(root) for root in sorted(set(roots))}
    first = next(iter(folders.values()))
    for folder in folders.values():
        if folder.fps != first.fps or _shape_of(folder.features) != _shape_of(first.features):
            raise DatasetError(f"{folder.root} and {first.root} differ in fps or features; one filtered "
                               f"dataset holds one kind of episode: filter them separately")
    return folders


def _shape_of(features: Dict[str, Dict[str, object]]) -> Dict[str, Tuple[str, Tuple[int, ...]]]:
    return {key: (str(f.get("dtype")), tuple(f.get("shape") or ())) for key, f in features.items()}


def check_plan(folders: Dict[str, LeRobotFolder], plans: Sequence[EpisodePlan]) -> None:
    """Refuse a span outside its episode, or an episode the source does not have, before writing."""
    for plan in plans:
        folder = folders[plan.source]
        episode = _episode(folder, plan.source_episode)
        if plan.end_frame > episode.length:
            raise DatasetError(f"{plan.source}: episode {plan.source_episode} has {episode.length} frames; the "
                               f"span [{plan.start_frame}, {plan.end_frame}) reaches past its end")


def _opened(root: str) -> LeRobotFolder:
    """Return a source opened once per process while its metadata is unchanged (a worker encodes many segments)."""
    meta = os.path.join(root, "meta")
    try:
        version = tuple((name, os.stat(os.path.join(meta, name)).st_mtime_ns)
                        for name in sorted(os.listdir(meta)))
    except OSError:
        version = ()
    return _opened_version(root, version)


@functools.lru_cache(maxsize=4)
def _opened_version(root: str, version) -> LeRobotFolder:
    return LeRobotFolder(root)


def _episode(folder: LeRobotFolder, index: int):
    position = bisect.bisect_left([e.index for e in folder.episodes], index)
    if position < len(folder.episodes) and folder.episodes[position].index == index:
        return folder.episodes[position]
    raise DatasetError(f"{folder.root}: no episode {index} (the dataset has {len(folder.episodes)})")


# --- video segments: what a worker does ------------------------------------------------------------

def encoder_for(folder: LeRobotFolder, key: str) -> Tuple[str, str]:
    """Return (PyAV encoder, pixel format) for a camera key: the source's codec when PyAV can encode it."""
    import av
    info = folder.features[key].get("info") or {}
    codec = str(info.get("video.codec") or "h264").lower()
    encoder = ENCODERS.get(codec, "libx264")
    if encoder not in av.codecs_available:
        encoder = "libx264"
    pix_fmt = str(info.get("video.pix_fmt") or "yuv420p")
    supported = {f.name for f in (av.codec.Codec(encoder, "w").video_formats or ())}
    if supported and pix_fmt not in supported:
        pix_fmt = "yuv420p"
    return encoder, pix_fmt


def encoder_options(folder: LeRobotFolder, key: str, encoder: str, crf: Optional[int]) -> Dict[str, str]:
    """Return the encoder options: the quality asked for, a keyframe every 2 frames, the source's preset if it fits."""
    info = folder.features[key].get("info") or {}
    options = {"crf": str(crf if crf is not None else DEFAULT_CRF.get(encoder, 18)), "g": "2"}
    if encoder != "libsvtav1":
        options["bf"] = "0"
    preset = info.get("video.preset")
    if preset is not None and isinstance(preset, int) == (encoder == "libsvtav1"):
        options["preset"] = str(preset)
    return options


def encode_segment(job: SegmentJob) -> Dict[str, object]:
    """Decode the span's frames of one key from the source video and encode them into ``job.path``.

    Returns the frame count and the frames' per-channel statistics (LeRobot's, in [0, 1]).
    """
    import av
    os.environ.setdefault("SVT_LOG", "1")  # SVT-AV1 prints its whole configuration for every encoder otherwise
    plan = job.plan
    folder = _opened(plan.source)
    episode = _episode(folder, plan.source_episode)
    encoder, pix_fmt = encoder_for(folder, job.key)
    rate = Fraction(folder.fps).limit_denominator(1001)
    stats = _PixelStats()
    os.makedirs(os.path.dirname(job.path), exist_ok=True)
    count = 0
    with av.open(job.path, "w") as out:
        stream = out.add_stream(encoder, rate=rate)
        stream.pix_fmt = pix_fmt
        stream.options = encoder_options(folder, job.key, encoder, job.crf)
        stream.codec_context.time_base = 1 / rate
        for rgb in _span_frames(folder, episode, job.key, plan.start_frame, plan.end_frame):
            if count == 0:
                stream.height, stream.width = rgb.shape[0], rgb.shape[1]
            stats.add(rgb)
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            frame.pts = count
            frame.time_base = 1 / rate
            for packet in stream.encode(frame):
                out.mux(packet)
            count += 1
        for packet in stream.encode():
            out.mux(packet)
    if count != plan.length:
        raise DatasetError(f"{folder.video_path(episode, job.key)}: {count} frames of key {job.key} in episode "
                           f"{plan.source_episode} frames [{plan.start_frame}, {plan.end_frame}), expected "
                           f"{plan.length} (the video and the data rows disagree)")
    return {"frames": count, "stats": stats.result()}


def _span_frames(folder: LeRobotFolder, episode, key: str, start: int, end: int):
    """Yield RGB frames ``start..end-1`` of one episode's key, decoded one at a time from the span's time."""
    base = float(episode.row[f"videos/{key}/from_timestamp"])
    first, stop = base + start / folder.fps, base + end / folder.fps
    half = 0.5 / folder.fps
    container = _SOURCE_VIDEOS.open(folder.video_path(episode, key))
    stream = container.streams.video[0]
    container.seek(int(max(first - half, 0) / stream.time_base), stream=stream, backward=True)
    for frame in container.decode(stream):
        t = float(frame.time)
        if t < first - half:
            continue
        if t >= stop - half:
            break
        yield frame.to_ndarray(format="rgb24")


class _OpenVideos:
    """Source videos kept open between segments: one file holds many episodes, and opening it reads its whole index."""

    LIMIT = 8

    def __init__(self) -> None:
        self.open_files: Dict[Tuple[str, int, int], object] = {}

    def open(self, path: str):
        import av
        try:
            status = os.stat(path)
            key = (path, status.st_mtime_ns, status.st_size)
            if key not in self.open_files:
                if len(self.open_files) >= self.LIMIT:
                    oldest = next(iter(self.open_files))
                    self.open_files.pop(oldest).close()
                self.open_files[key] = av.open(path)
            else:
                self.open_files[key] = self.open_files.pop(key)  # the newest used last
        except (OSError, av.error.FFmpegError) as exc:
            raise DatasetError(f"{path}: not a readable video ({exc})") from exc
        return self.open_files[key]

    def close(self) -> None:
        for container in self.open_files.values():
            container.close()
        self.open_files = {}


_SOURCE_VIDEOS = _OpenVideos()


class _PixelStats:
    """Per-channel running min/max/mean/std and exact uint8 quantiles, without keeping frames."""

    def __init__(self) -> None:
        self.histogram: Optional[np.ndarray] = None  # (channels, 256)
        self.frames = 0

    def add(self, rgb: np.ndarray) -> None:
        channels = rgb.shape[2]
        if self.histogram is None:
            self.histogram = np.zeros((channels, 256), np.int64)
        for channel in range(channels):
            self.histogram[channel] += np.bincount(rgb[..., channel].reshape(-1), minlength=256)
        self.frames += 1

    def result(self) -> Dict[str, list]:
        if self.histogram is None:
            return {}
        levels = np.arange(256, dtype=np.float64) / 255.0
        totals = self.histogram.sum(axis=1)
        mean = (self.histogram * levels).sum(axis=1) / totals
        var = (self.histogram * (levels[None, :] - mean[:, None]) ** 2).sum(axis=1) / totals
        nonzero = [np.nonzero(h)[0] for h in self.histogram]
        values = {"min": [n[0] / 255.0 for n in nonzero], "max": [n[-1] / 255.0 for n in nonzero],
                  "mean": mean.tolist(), "std": np.sqrt(var).tolist()}
        cumulative = np.cumsum(self.histogram, axis=1)
        for name, q in zip(QUANTILE_KEYS, QUANTILES):
            values[name] = [float(np.searchsorted(c, q * c[-1]) / 255.0) for c in cumulative]
        shaped = {name: [[[v]] for v in channel_values] for name, channel_values in values.items()}
        shaped["count"] = [self.frames]
        return shaped


# --- the driver: rows, joined videos, metadata -------------------------------------------------------

class _RowReader:
    """A source's per-frame rows, read a row group at a time; the last group read is kept."""

    def __init__(self) -> None:
        self._cached: Optional[Tuple[str, int, object]] = None

    def rows(self, folder: LeRobotFolder, episode, start: int, end: int):
        """Return the episode's rows with frame_index in [start, end), in frame order, as a pyarrow table."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
        template = folder.info.get("data_path") or DEFAULT_DATA_PATH
        path = os.path.join(folder.root, template.format(chunk_index=int(episode.row["data/chunk_index"]),
                                                         file_index=int(episode.row["data/file_index"])))
        parquet = pq.ParquetFile(path)
        column = parquet.schema_arrow.get_field_index("episode_index")
        parts = []
        for group in range(parquet.num_row_groups):
            statistics = parquet.metadata.row_group(group).column(column).statistics
            if statistics is not None and statistics.has_min_max and not (
                    statistics.min <= episode.index <= statistics.max):
                continue
            if self._cached is not None and self._cached[:2] == (path, group):
                table = self._cached[2]
            else:
                table = parquet.read_row_group(group)
                self._cached = (path, group, table)
            mask = pc.and_(pc.equal(table.column("episode_index"), episode.index),
                           pc.and_(pc.greater_equal(table.column("frame_index"), start),
                                   pc.less(table.column("frame_index"), end)))
            parts.append(table.filter(mask))
        rows = pa.concat_tables(parts) if parts else None
        if rows is None or rows.num_rows != end - start:
            found = 0 if rows is None else rows.num_rows
            raise DatasetError(f"{path}: {found} rows of episode {episode.index} frames [{start}, {end}), "
                               f"expected {end - start}")
        return rows.sort_by("frame_index")


class _VideoJoiner:
    """One camera key's video files of the new dataset: segments appended with shifted packet times."""

    def __init__(self, out_dir: str, key: str, template: str, chunks_size: int, limit_bytes: int) -> None:
        self.out_dir, self.key, self.template = out_dir, key, template
        self.chunks_size, self.limit_bytes = chunks_size, limit_bytes
        self.chunk = self.file = 0
        self.container = self.stream = None
        self.seconds = Fraction(0)
        self.bytes = 0

    def append(self, segment: str, frames: int, fps: float) -> Tuple[int, int, float, float]:
        """Append a segment; return (chunk, file, from_timestamp, to_timestamp) of it in the new file."""
        import av
        size = os.path.getsize(segment)
        if self.container is not None and self.bytes + size > self.limit_bytes:
            self.close()
            self.chunk, self.file = _next_file(self.chunk, self.file, self.chunks_size)
        with av.open(segment) as source:
            in_stream = source.streams.video[0]
            if self.container is None:
                path = os.path.join(self.out_dir, self.template.format(video_key=self.key, chunk_index=self.chunk,
                                                                       file_index=self.file))
                os.makedirs(os.path.dirname(path), exist_ok=True)
                self.container = av.open(path, "w")
                # opaque: the codec parameters are copied as they are (the decoder of AV1, libdav1d, is no encoder)
                self.stream = self.container.add_stream_from_template(in_stream, opaque=True)
                self.seconds, self.bytes = Fraction(0), 0
            shift = int(round(self.seconds / in_stream.time_base))
            for packet in source.demux(in_stream):
                if packet.dts is None:  # the demuxer's end-of-stream flush packet
                    continue
                packet.pts += shift
                packet.dts += shift
                packet.stream = self.stream
                self.container.mux(packet)
        start = float(self.seconds)
        self.seconds += Fraction(frames) / Fraction(fps).limit_denominator(1001)
        self.bytes += size
        return self.chunk, self.file, start, float(self.seconds)

    def close(self) -> None:
        if self.container is not None:
            self.container.close()
            self.container = self.stream = None


def _next_file(chunk: int, file: int, chunks_size: int) -> Tuple[int, int]:
    file += 1
    if file >= chunks_size:
        return chunk + 1, 0
    return chunk, file


def _column_array(table, name: str) -> np.ndarray:
    column = table.column(name).combine_chunks()
    import pyarrow as pa
    if pa.types.is_fixed_size_list(column.type) or pa.types.is_list(column.type):
        return np.asarray(column.to_pylist(), dtype=np.float64)
    return column.to_numpy(zero_copy_only=False).astype(np.float64)


def _numeric_stats(values: np.ndarray) -> Dict[str, list]:
    """Return LeRobot's per-episode statistics of one numeric feature (exact quantiles)."""
    array = values.reshape(len(values), -1) if values.ndim > 1 else values.reshape(-1, 1)
    stats = {"min": array.min(axis=0), "max": array.max(axis=0), "mean": array.mean(axis=0),
             "std": array.std(axis=0)}
    for name, q in zip(QUANTILE_KEYS, QUANTILES):
        stats[name] = np.quantile(array, q, axis=0)
    result = {name: value.tolist() for name, value in stats.items()}
    result["count"] = [int(len(array))]
    return result


def aggregate_stats(per_episode: Sequence[Dict[str, Dict[str, list]]]) -> Dict[str, Dict[str, list]]:
    """Combine per-episode statistics as LeRobot does (count-weighted mean, pooled variance, weighted quantiles)."""
    result: Dict[str, Dict[str, list]] = {}
    keys = sorted({key for stats in per_episode for key in stats})
    for key in keys:
        items = [stats[key] for stats in per_episode if key in stats]
        counts = np.array([item["count"][0] for item in items], dtype=np.float64)
        total = counts.sum()
        means = np.stack([np.asarray(item["mean"], np.float64) for item in items])
        weights = counts.reshape((-1,) + (1,) * (means.ndim - 1))
        mean = (means * weights).sum(axis=0) / total
        variances = np.stack([np.asarray(item["std"], np.float64) ** 2 for item in items])
        variance = ((variances + (means - mean) ** 2) * weights).sum(axis=0) / total
        entry = {"min": np.min(np.stack([np.asarray(i["min"], np.float64) for i in items]), axis=0).tolist(),
                 "max": np.max(np.stack([np.asarray(i["max"], np.float64) for i in items]), axis=0).tolist(),
                 "mean": mean.tolist(), "std": np.sqrt(variance).tolist(), "count": [int(total)]}
        for name in QUANTILE_KEYS:
            if all(name in item for item in items):
                stacked = np.stack([np.asarray(item[name], np.float64) for item in items])
                entry[name] = ((stacked * weights).sum(axis=0) / total).tolist()
        result[key] = entry
    return result


def _pandas_tasks_note(columns: Sequence[str]) -> bytes:
    """Return the pandas schema note that makes ``task`` the index LeRobot reads tasks.parquet by."""
    fields = [{"name": "task", "field_name": "task", "pandas_type": "unicode", "numpy_type": "object",
               "metadata": None}]
    fields += [{"name": c, "field_name": c, "pandas_type": "int64", "numpy_type": "int64", "metadata": None}
               for c in columns]
    return json.dumps({"index_columns": ["task"], "column_indexes": [
        {"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object",
         "metadata": {"encoding": "UTF-8"}}], "columns": fields,
        "creator": {"library": "pyarrow", "version": "0"}, "pandas_version": "2.2.3"}).encode()


def plan_tasks(folders: Dict[str, LeRobotFolder], plans: Sequence[EpisodePlan]) -> List[str]:
    """Return the new dataset's tasks in order of first use (episodes in plan order)."""
    tasks: List[str] = []
    for plan in plans:
        episode = _episode(folders[plan.source], plan.source_episode)
        texts = [plan.task] if plan.task is not None else list(episode.tasks) or [
            folders[plan.source].instruction(episode)]
        tasks += [t for t in texts if t not in tasks]
    return tasks


SegmentRunner = Callable[[Sequence[SegmentJob]], Iterable[Tuple[SegmentJob, Dict[str, object]]]]


def run_segments_here(jobs: Sequence[SegmentJob]) -> Iterable[Tuple[SegmentJob, Dict[str, object]]]:
    """Encode the segments one after another in this process, yielding each as it is done (in order)."""
    try:
        for job in jobs:
            yield job, encode_segment(job)
    finally:
        _SOURCE_VIDEOS.close()


def write_subset(folders: Dict[str, LeRobotFolder], plans: Sequence[EpisodePlan], out_dir: str,
                 run_segments: SegmentRunner = run_segments_here, crf: Optional[int] = None,
                 on_episode: Optional[Callable[[EpisodePlan], None]] = None) -> Dict[str, object]:
    """Write the planned episodes as a new LeRobot v3 dataset at ``out_dir`` (which must not exist).

    ``run_segments`` encodes the video segments (here, or on Ray workers) and must yield them in
    the order given; ``on_episode`` is called as each episode is written (a progress bar).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    if os.path.lexists(out_dir):
        raise FileExistsError(f"{out_dir} exists: choose a new folder for the filtered dataset")
    check_plan(folders, plans)
    first = folders[plans[0].source]
    info = json.loads(json.dumps(first.info))
    video_keys = list(first.video_keys)
    tasks = plan_tasks(folders, plans)
    task_index = {text: i for i, text in enumerate(tasks)}
    source_tasks = {root: {i: t for i, t in folder.tasks.items()} for root, folder in folders.items()}
    chunks_size = int(info.get("chunks_size") or 1000)
    data_limit = int(float(info.get("data_files_size_in_mb") or 100) * 1024 * 1024)
    video_limit = int(float(info.get("video_files_size_in_mb") or 200) * 1024 * 1024)
    data_template = info.get("data_path") or DEFAULT_DATA_PATH
    video_template = info.get("video_path") or DEFAULT_VIDEO_PATH
    # Numeric columns; video keys get theirs from the encoded frames. Images stored in the parquet rows
    # (dtype "image") are copied as they are, without statistics.
    stats_features = [k for k, f in first.features.items()
                      if f.get("dtype") not in ("string", "language", "image", "video")]
    had_stats = os.path.isfile(os.path.join(first.root, "meta", "stats.json"))
    scratch = os.path.normpath(out_dir) + ".segments"  # beside the dataset, never inside it
    if os.path.lexists(scratch):
        raise FileExistsError(f"{scratch} exists (left by an interrupted filter?): remove it first")
    os.makedirs(out_dir)
    jobs = [SegmentJob(plan, key, os.path.join(scratch, f"{plan.new_index:06d}", _safe_key(key) + ".mp4"), crf)
            for plan in plans for key in video_keys]
    joiners = {key: _VideoJoiner(out_dir, key, video_template, chunks_size, video_limit) for key in video_keys}
    reader = _RowReader()
    episodes_meta = _EpisodeTable(os.path.join(out_dir, EPISODES_PATH.format(chunk_index=0, file_index=0)))
    aggregated: Dict[str, Dict[str, list]] = {}
    data = _DataFiles(out_dir, data_template, chunks_size, data_limit)
    total = 0
    segments = iter(run_segments(jobs))
    try:
        for plan in plans:
            folder = folders[plan.source]
            episode = _episode(folder, plan.source_episode)
            rows = reader.rows(folder, episode, plan.start_frame, plan.end_frame)
            rows = _rewrite_rows(rows, plan, total, task_index, source_tasks[plan.source], folder.fps)
            data_chunk, data_file = data.append(rows)
            stats = {name: _numeric_stats(_column_array(rows, name)) for name in stats_features
                     if name in rows.column_names}
            entry: Dict[str, object] = {
                "episode_index": plan.new_index,
                "tasks": _episode_tasks(rows, tasks),
                "length": plan.length,
                "data/chunk_index": data_chunk, "data/file_index": data_file,
                "dataset_from_index": total, "dataset_to_index": total + plan.length}
            for key in video_keys:
                job, result = next(segments)
                if (job.plan.new_index, job.key) != (plan.new_index, key):
                    raise RuntimeError(f"segment of episode {job.plan.new_index} key {job.key} came back out of "
                                       f"order (expected {plan.new_index} {key})")
                chunk, file, start, end = joiners[key].append(job.path, int(result["frames"]), folder.fps)
                os.remove(job.path)
                entry.update({f"videos/{key}/chunk_index": chunk, f"videos/{key}/file_index": file,
                              f"videos/{key}/from_timestamp": start, f"videos/{key}/to_timestamp": end})
                stats[key] = result["stats"]
            entry.update({"meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0})
            entry.update({f"stats/{name}/{stat}": value for name, values in stats.items()
                          for stat, value in values.items()})
            episodes_meta.append(entry)
            aggregated = aggregate_stats([aggregated, stats]) if aggregated else stats
            total += plan.length
            if on_episode is not None:
                on_episode(plan)
    except BaseException:
        for joiner in joiners.values():
            joiner.close()
        data.close()
        episodes_meta.close()
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(out_dir, ignore_errors=True)
        raise
    for joiner in joiners.values():
        joiner.close()
    data.close()
    episodes_meta.close()
    shutil.rmtree(scratch, ignore_errors=True)
    task_table = pa.table({"task": tasks, "task_index": pa.array(range(len(tasks)), pa.int64())})
    task_table = task_table.replace_schema_metadata({b"pandas": _pandas_tasks_note(["task_index"])})
    pq.write_table(task_table, os.path.join(out_dir, "meta", "tasks.parquet"))
    if had_stats:
        with open(os.path.join(out_dir, "meta", "stats.json"), "w") as handle:
            json.dump(aggregated, handle, indent=4)
    info.update({"total_episodes": len(plans), "total_frames": total, "total_tasks": len(tasks),
                 "splits": {"train": f"0:{len(plans)}"}})
    for key in video_keys:
        encoder, pix_fmt = encoder_for(first, key)
        video_info = info["features"][key].setdefault("info", {})
        video_info["video.codec"] = {"libx264": "h264", "libx265": "hevc", "libsvtav1": "av1"}[encoder]
        video_info["video.pix_fmt"] = pix_fmt
        options = encoder_options(first, key, encoder, crf)
        for name in ("crf", "g", "preset"):
            if f"video.{name}" in video_info or name in ("crf", "g"):
                value = options.get(name)
                video_info[f"video.{name}"] = int(value) if value is not None and value.lstrip("-").isdigit() else value
    with open(os.path.join(out_dir, "meta", "info.json"), "w") as handle:
        json.dump(info, handle, indent=4, ensure_ascii=False)
    return {"episodes": len(plans), "frames": total, "tasks": tasks, "stats_json": had_stats}


class _DataFiles:
    """The new dataset's per-frame parquet files: episodes' rows gathered into large row groups.

    A row group per episode would be slow to read, and the writer keeps every row group's
    metadata until it closes (kilobytes each: a 3,000-episode dataset grew the process by 20 MB).
    """

    GROUP_ROWS = 100_000
    GROUP_BYTES = 64 * 1024 * 1024

    def __init__(self, out_dir: str, template: str, chunks_size: int, limit_bytes: int) -> None:
        self.out_dir, self.template, self.chunks_size, self.limit_bytes = out_dir, template, chunks_size, limit_bytes
        self.chunk = self.file = 0
        self.writer = None
        self.pending: list = []
        self.pending_rows = self.pending_bytes = self.file_bytes = 0

    def append(self, rows) -> Tuple[int, int]:
        """Add one episode's rows; return the (chunk, file) they go to."""
        if self.file_bytes and self.file_bytes + rows.nbytes > self.limit_bytes:
            self._close_file()
            self.chunk, self.file = _next_file(self.chunk, self.file, self.chunks_size)
        self.pending.append(rows)
        self.pending_rows += rows.num_rows
        self.pending_bytes += rows.nbytes
        self.file_bytes += rows.nbytes
        if self.pending_rows >= self.GROUP_ROWS or self.pending_bytes >= self.GROUP_BYTES:
            self._flush()
        return self.chunk, self.file

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq
        if not self.pending:
            return
        table = pa.concat_tables(self.pending)
        if self.writer is None:
            path = os.path.join(self.out_dir, self.template.format(chunk_index=self.chunk, file_index=self.file))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.writer = pq.ParquetWriter(path, table.schema)
        self.writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self.pending, self.pending_rows, self.pending_bytes = [], 0, 0

    def _close_file(self) -> None:
        self._flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        self.file_bytes = 0

    def close(self) -> None:
        self._close_file()


class _EpisodeTable:
    """meta/episodes written a batch of rows at a time, so its size does not grow the process."""

    BATCH = 256

    def __init__(self, path: str) -> None:
        self.path = path
        self.rows: List[Dict[str, object]] = []
        self.writer = None

    def append(self, row: Dict[str, object]) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq
        if not self.rows:
            return
        if self.writer is None:
            table = pa.Table.from_pylist(self.rows)
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.writer = pq.ParquetWriter(self.path, table.schema)
        else:
            table = pa.Table.from_pylist(self.rows, schema=self.writer.schema)
        self.writer.write_table(table)
        self.rows = []

    def close(self) -> None:
        self._flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _safe_key(key: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in key)


def _episode_tasks(rows, tasks: Sequence[str]) -> List[str]:
    used = sorted(set(rows.column("task_index").to_pylist())) if "task_index" in rows.column_names else []
    return [tasks[i] for i in used]


def _rewrite_rows(rows, plan: EpisodePlan, offset: int, task_index: Dict[str, int], source_tasks: Dict[int, str],
                  fps: float):
    """Renumber one span's rows as a new episode: index, episode_index, frame_index, timestamp, task_index."""
    import pyarrow as pa
    n = rows.num_rows
    replaced = {
        "index": np.arange(offset, offset + n, dtype=np.int64),
        "episode_index": np.full(n, plan.new_index, dtype=np.int64),
        "frame_index": np.arange(n, dtype=np.int64)}
    if "timestamp" in rows.column_names:
        stamps = rows.column("timestamp").to_numpy().astype(np.float64)
        frames = rows.column("frame_index").to_numpy().astype(np.float64)
        if np.all(np.abs(stamps - frames / fps) < 1e-4):  # a regular source: new frame k at exactly k / fps
            replaced["timestamp"] = np.arange(n, dtype=np.float64) / fps
        else:
            replaced["timestamp"] = stamps - stamps[0]
    if "task_index" in rows.column_names:
        old = rows.column("task_index").to_pylist()
        if plan.task is not None:
            replaced["task_index"] = np.full(n, task_index[plan.task], dtype=np.int64)
        else:
            try:
                replaced["task_index"] = np.array([task_index[source_tasks[i]] for i in old], dtype=np.int64)
            except KeyError as exc:
                raise DatasetError(f"{plan.source}: episode {plan.source_episode} uses task_index {exc} which "
                                   f"meta/tasks.parquet does not have") from None
    for name, values in replaced.items():
        position = rows.schema.get_field_index(name)
        if position < 0:
            continue
        field = rows.schema.field(position)
        rows = rows.set_column(position, field, pa.array(values).cast(field.type))
    return rows
