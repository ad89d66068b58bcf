# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``rank --ray`` and ``eval --confusion --ray``: episodes scored by Ray workers, each holding the model once.

The replay's Ray path (replay/ray_replay.py: the runtime, its options, the address check) with
one row per episode reference: an actor loads the model when it starts and runs the same
``EpisodeScorer`` as the single-process run on one episode at a time, so each row is the one a
single process writes (up to float round-off between machines). Only references travel to the
workers and only score rows come back; the workers read the frames themselves, so on a cluster
the datasets must be at the same path on every node. Ray is imported by this module only.
"""
from __future__ import annotations

import dataclasses
import json
import os
import warnings
from typing import Any, Dict, List, Sequence

from robo_reward_ros.recordings.episode_sources import EpisodeRef


class EpisodeScoringWorker:
    """A Ray Data actor: the model loaded once, then one episode reference per call."""

    def __init__(self, values: Dict[str, Any], job, cwd: str) -> None:
        from robo_reward_ros.replay.episode_scoring import EpisodeScorer
        if os.path.isdir(cwd):
            os.chdir(cwd)
        self.scorer, self.fatal = None, ""
        try:
            self.scorer = EpisodeScorer(values, job)
        except (ValueError, RuntimeError, OSError) as exc:  # said once by the driver, as one line
            self.fatal = str(exc)

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, List[Any]]:
        from robo_reward_ros.replay.episode_scoring import episode_error
        results = []
        for text in batch["ref"]:
            ref = EpisodeRef(**json.loads(str(text)))
            if self.fatal:
                results.append(json.dumps({"fatal": self.fatal}))
                continue
            try:
                results.append(json.dumps({"rows": self.scorer.score(ref)}))
            except (ValueError, RuntimeError, OSError) as exc:
                results.append(json.dumps({"error": episode_error(ref, exc)}))
        return {"position": [int(p) for p in batch["position"]], "result": results}

    def __del__(self) -> None:
        if getattr(self, "scorer", None) is not None:
            self.scorer.close()


def score_on_ray(values: Dict[str, Any], refs: Sequence[EpisodeRef], job, options, progress_bar: bool = True,
                 log=print):
    """Score ``refs`` on Ray workers; return the ``ScoredSet`` the single-process run returns."""
    from robo_reward_ros.replay.episode_scoring import ScoredSet
    from robo_reward_ros.replay.ray_replay import import_ray, ray_data_run
    ray = import_ray()
    from ray.data import ActorPoolStrategy
    from tqdm import tqdm
    returned: Dict[int, Dict[str, Any]] = {}
    with ray_data_run(options, log):
        items = [{"position": i, "ref": json.dumps(dataclasses.asdict(ref))} for i, ref in enumerate(refs)]
        rows = ray.data.from_items(items, override_num_blocks=len(items))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*ray_remote_args.*deprecated")
            scored = rows.map_batches(
                EpisodeScoringWorker, batch_size=1,
                compute=ActorPoolStrategy(size=min(options.workers, len(refs)), max_tasks_in_flight_per_actor=1),
                fn_constructor_kwargs={"values": values, "job": job, "cwd": os.getcwd()},
                num_cpus=options.cpus_per_worker, num_gpus=options.gpus_per_worker or None,
                max_restarts=-1, max_task_retries=options.retries)
        with tqdm(total=len(refs), unit="episode", desc="episodes", disable=not progress_bar) as bar:
            for row in scored.iter_rows():
                returned[int(row["position"])] = json.loads(row["result"])
                bar.update(1)
    done = ScoredSet([], [], len(refs))
    for position, ref in enumerate(refs):
        result = returned.get(position)
        if result is None:
            done.errors.append(f"{ref.source}: episode {ref.episode}: its Ray worker died {options.retries + 1} "
                               f"time(s) scoring it (skipped; see the Ray logs)")
        elif "fatal" in result:
            raise ValueError(result["fatal"])
        elif "error" in result:
            done.errors.append(result["error"])
        else:
            done.rows += result["rows"]
    return done
