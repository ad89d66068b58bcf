# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward replay --ray``: a fleet's bags spread over Ray workers, each holding the model once.

Ray Data maps a pool of actors over one row per bag. Each actor loads the model when it starts and
runs ``replay_bags`` (the single-process run's own function: the node's pipeline per episode, the
reuse of ``OUT/scored``, the MCAP writer) on one bag at a time, so every decision is the one a
single process makes. The unit of work is a bag with all its episodes, in order: a bag's episodes
are found by reading it through, and most fleets record one bag per episode or session.

Workers write ``OUT/scored`` and ``OUT/mcap`` themselves and send back each episode's summary,
estimates and events; the driver writes ``estimates.jsonl``, ``events.jsonl`` and ``episodes.json``
in bag order, as the single-process run does. On a cluster, the bags and OUT must therefore be at
the same path on every node (shared storage) and every node needs this package installed.

A worker process that dies (killed, out of memory, a node lost) is restarted and its bag replayed
again, up to ``retries`` times; episodes it had finished come back from ``OUT/scored``. A bag that
kills its worker every time is reported and skipped, like an unreadable one.

Ray is imported here only, and this module only by the ``--ray`` path: the node and the core run
without Ray.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import warnings
from typing import Any, Dict, Iterator, List, Sequence, Tuple

from robo_reward_ros.replay.bag_replay import BagReplayResult
from robo_reward_ros.recordings.robot_recording import RecordingOptions
from robo_reward_ros.replay.scored_episodes import StoredTrace
from robo_reward_ros.recordings.trace import EstimateRecord, EventRecord


@dataclasses.dataclass(frozen=True)
class RayOptions:
    """Where and how wide: ``address`` empty starts a local runtime sized to the workers."""

    address: str = ""  # "" local; "auto", "HOST:PORT" or "ray://HOST:10001": the user's cluster
    workers: int = 2  # actors, each with its own copy of the model
    cpus_per_worker: float = 1.0
    gpus_per_worker: float = 0.0  # 1 = one GPU each; 0.5 = two workers share a GPU
    retries: int = 3  # times a bag is replayed again after its worker process died


def check_address(address: str) -> str:
    """Refuse a bag folder taken for an address (``--ray BAGS...`` puts the first bag there)."""
    if address and os.path.exists(address):
        raise ValueError(f"--ray {address}: that is a path, not a Ray address; put --ray after the "
                         f"bags, or write --ray=auto / --ray=HOST:PORT")
    return address


def import_ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise RuntimeError(f"--ray needs Ray Data: pip install -r requirements/scale.txt ({exc})") from None
    return ray


@contextlib.contextmanager
def ray_runtime(options: RayOptions, log=print) -> Iterator[None]:
    """Use Ray as it is if this process already joined it, else join ``address`` or start a quiet local one."""
    ray = import_ray()
    if ray.is_initialized():
        yield
        return
    if options.address:
        try:
            ray.init(address=options.address, logging_level=logging.WARNING)
        except ConnectionError as exc:
            raise RuntimeError(f"--ray {options.address}: cannot join a Ray cluster there ({exc}); start one "
                               f"with 'ray start --head', or leave ADDRESS out for a local runtime. A cluster "
                               f"with token authentication (Ray's default) also needs RAY_AUTH_MODE=token and its "
                               f"token (ray get-auth-token) in ~/.ray/auth_token or RAY_AUTH_TOKEN here") from None
        log(f"replay: joined the Ray cluster at {options.address} "
            f"({ray.cluster_resources().get('CPU', 0):g} CPUs, {ray.cluster_resources().get('GPU', 0):g} GPUs)")
    else:
        # "local": a new runtime of our own, even where a 'ray start' cluster runs on this machine
        ray.init(address="local", num_cpus=max(1, math.ceil(options.workers * options.cpus_per_worker)),
                 include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@contextlib.contextmanager
def ray_data_run(options: RayOptions, log=print) -> Iterator[None]:
    """Check the worker options, join Ray (ray_runtime) and keep Ray Data's own bars and error limit out.

    A unit whose worker died more than ``retries`` times fails its block only: the caller counts it.
    """
    if options.workers < 1 or options.retries < 0:
        raise ValueError("--ray-workers must be >= 1 and --ray-retries >= 0")
    from ray.data import DataContext
    with ray_runtime(options, log):
        context = DataContext.get_current()
        saved = (context.enable_progress_bars, context.max_errored_blocks)
        context.enable_progress_bars, context.max_errored_blocks = False, -1
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)  # "bars disabled": ours
        try:
            yield
        finally:
            context.enable_progress_bars, context.max_errored_blocks = saved


class BagReplayWorker:
    """A Ray Data actor: the model loaded once, then ``replay_bags`` on each bag it is handed."""

    def __init__(self, values: Dict[str, Any], out: str, reading: RecordingOptions,
                 run_key: Dict[str, Any], force: bool, mcap: bool, cwd: str) -> None:
        from robo_reward_ros.replay.offline_replay import OfflineReplay
        if os.path.isdir(cwd):
            os.chdir(cwd)  # relative bag and OUT paths mean what they mean to the driver
        self.replayer = OfflineReplay(values)
        self.writer = None
        if mcap:
            from robo_reward_ros.recordings.episode_mcap import EpisodeMcapWriter
            self.writer = EpisodeMcapWriter(os.path.join(out, "mcap"), values)
        self.out, self.reading, self.run_key, self.force = out, reading, run_key, force

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, List[Any]]:
        positions = [int(p) for p in batch["position"]]
        results = [self._replay(str(bag)) for bag in batch["bag"]]
        return {"position": positions, "result": results}

    def _replay(self, bag: str) -> str:
        from robo_reward_ros.replay.bag_replay import replay_bags
        if self.writer is not None:
            self.writer.written = []
        try:
            done = replay_bags(self.replayer, [bag], self.out, self.reading, self.run_key,
                               self.force, False, self.writer)
        except Exception as exc:  # reported and skipped, like an unreadable bag: the others go on
            done = BagReplayResult([], [f"{bag}: {type(exc).__name__}: {exc}"])
        return json.dumps({
            "traces": [{"summary": t.summary(), "estimates": [dataclasses.asdict(e) for e in t.estimates],
                        "events": [dataclasses.asdict(e) for e in t.events]} for t in done.traces],
            "errors": done.errors, "scored": done.scored, "reused": done.reused,
            "mcap": list(self.writer.written) if self.writer is not None else [],
            "refusals": done.refusals})

    def __del__(self) -> None:
        replayer = getattr(self, "replayer", None)
        if replayer is not None:
            replayer.close()


def replay_bags_on_ray(values: Dict[str, Any], bags: Sequence[str], out: str, reading: RecordingOptions,
                       run_key: Dict[str, Any], force: bool, mcap: bool, options: RayOptions,
                       progress_bar: bool = True, log=print, on_result=None) -> Tuple[BagReplayResult, List[str]]:
    """Replay ``bags`` on Ray; return what ``replay_bags`` would (traces in bag order) and the MCAPs written.

    ``on_result(bag)`` is called as each bag's result arrives (the benchmark times them).
    """
    ray = import_ray()
    from ray.data import ActorPoolStrategy
    from tqdm import tqdm
    returned: Dict[int, Dict[str, Any]] = {}
    with ray_data_run(options, log):
        rows = ray.data.from_items([{"position": i, "bag": bag} for i, bag in enumerate(bags)],
                                   override_num_blocks=len(bags))
        with warnings.catch_warnings():
            # Ray 2.60 has no named parameter for the retries yet (ray_remote_args until 2.64).
            warnings.filterwarnings("ignore", message=".*ray_remote_args.*deprecated")
            scored = rows.map_batches(
                BagReplayWorker, batch_size=1,
                compute=ActorPoolStrategy(size=min(options.workers, len(bags)), max_tasks_in_flight_per_actor=1),
                fn_constructor_kwargs={"values": values, "out": out, "reading": reading, "run_key": run_key,
                                       "force": force, "mcap": mcap, "cwd": os.getcwd()},
                num_cpus=options.cpus_per_worker, num_gpus=options.gpus_per_worker or None,
                max_restarts=-1, max_task_retries=options.retries)
        with tqdm(total=len(bags), unit="bag", disable=not progress_bar, desc="bags") as bar:
            for row in scored.iter_rows():
                result = json.loads(row["result"])
                returned[int(row["position"])] = result
                if on_result is not None:
                    on_result(bags[int(row["position"])])
                bar.update(1)
    return _assemble(bags, returned, options)


def _assemble(bags: Sequence[str], returned: Dict[int, Dict[str, Any]],
              options: RayOptions) -> Tuple[BagReplayResult, List[str]]:
    """Put the workers' results in bag order; a bag with none lost its worker too often."""
    done = BagReplayResult([], [])
    written: List[str] = []
    for position, bag in enumerate(bags):
        result = returned.get(position)
        if result is None:
            message = (f"{bag}: its Ray worker died {options.retries + 1} time(s) replaying it "
                       f"(skipped; see the Ray logs)")
            done.errors.append(message)
            continue
        done.traces += [StoredTrace(t["summary"], [EstimateRecord(**e) for e in t["estimates"]],
                                    [EventRecord(**e) for e in t["events"]]) for t in result["traces"]]
        done.errors += result["errors"]
        done.refusals += result["refusals"]
        done.scored += result["scored"]
        done.reused += result["reused"]
        written += result["mcap"]
    return done, written
