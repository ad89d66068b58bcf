# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward filter --ray``: the parts of filtering that are independent, on Ray workers.

One LeRobot dataset cannot be written by many processes at once: its rows live in shared parquet
files with one contiguous ``index``, and its episodes share video files whose times follow each
other. What is independent is the expensive part, decoding a kept span's frames and encoding them
again: each (episode, camera key) is encoded by a Ray task into its own small mp4 under the output
folder, and the driver joins them packet by packet, writes the rows and the metadata, in episode
order, exactly as the single-process run does with segments it encodes itself. A bag span is
written whole by one task (one output bag per span). Results are taken in the order given, so the
output is the single-process run's: the same rows, metadata, packet times and decoded frames
(x264's bytes have differed in a few packets, rarely, with the pixels equal); on a cluster the
sources and the output folder must be at the same path on every node (shared storage), as for
``replay --ray``.

Ray is imported here only (through ray_replay), and this module only by the ``--ray`` path.
"""
from __future__ import annotations

import os
from typing import Iterator, Sequence, Tuple

from robo_reward_ros.replay.ray_replay import RayOptions, import_ray, ray_runtime


def _encode(job, cwd):
    from robo_reward_ros.recordings.dataset_subset import encode_segment
    if os.path.isdir(cwd):
        os.chdir(cwd)  # relative sources and output mean what they mean to the driver
    return encode_segment(job)


def _write_bag(job, cwd):
    from robo_reward_ros.recordings.dataset_subset_bags import write_bag_span
    if os.path.isdir(cwd):
        os.chdir(cwd)
    return write_bag_span(job)


class RayRunner:
    """Run jobs as Ray tasks, at most ``workers`` at a time, and yield (job, result) in the jobs' order."""

    def __init__(self, options: RayOptions, function) -> None:
        if options.workers < 1 or options.retries < 0:
            raise ValueError("--ray-workers must be >= 1 and --ray-retries >= 0")
        self.options, self.function = options, function

    def __call__(self, jobs: Sequence[object]) -> Iterator[Tuple[object, dict]]:
        ray = import_ray()
        remote = ray.remote(num_cpus=self.options.cpus_per_worker,
                            max_retries=self.options.retries)(self.function)
        cwd = os.getcwd()
        pending = list(jobs)
        window = max(2 * self.options.workers, 1)  # in flight: bounded, so the driver's memory is too
        futures = [remote.remote(job, cwd) for job in pending[:window]]
        submitted = len(futures)
        for position, job in enumerate(pending):
            result = ray.get(futures[position])
            futures[position] = None
            if submitted < len(pending):
                futures.append(remote.remote(pending[submitted], cwd))
                submitted += 1
            yield job, result


def filter_on_ray(options: RayOptions, log=print, **arguments) -> dict:
    """Run ``filter_ranking`` with segment encoding and bag writing on Ray workers."""
    from robo_reward_ros.recordings.dataset_filter import filter_ranking
    with ray_runtime(options, log):
        return filter_ranking(segment_runner=RayRunner(options, _encode),
                              bag_runner=RayRunner(options, _write_bag), **arguments)
