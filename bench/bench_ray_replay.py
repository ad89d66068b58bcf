# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episodes per minute of ``robo-reward replay --ray`` with 1 and 2 workers, and a multi-GPU projection.

Synthetic tabletop episodes (the project's own bag layout, ``--frames`` frames of 320x240 at 10 Hz)
are replayed with the tiny Robometer checkpoint on CPU through ``replay_bags_on_ray`` (what
``replay --ray`` runs), 1 worker then 2, on one local Ray runtime (2 CPUs, one per worker; Ray
gives each worker one torch thread). Per run: the wall time from submitting to the last result
(actor start and model load included) and the steady rate, from the arrival of each worker's first
result to the last result (what a long run converges to). A single-process run (no Ray, one
torch thread like each worker) of the same bags is timed for comparison, and its outputs are
checked equal to each Ray run's.

The projection for an N-GPU node is arithmetic, not a measurement: per-episode cost = the
non-model part measured here (reading, decoding, window, monitor, per frame) + steps x the
Robometer-4B bf16 step measured on an H200 (bench/results/gpu/real_arch_gpu_bf16_nf4.json),
times N workers (one per GPU): linear, and scaled by the 2-worker efficiency measured here.

    python bench/bench_ray_replay.py --json bench/results/ray_replay.json
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as common  # noqa: E402

GPU_RESULT = os.path.join(common.HERE, "results", "gpu", "real_arch_gpu_bf16_nf4.json")


def make_bags(root, count, frames):
    from robo_reward_ros.core.frame import Frame
    from robo_reward_ros.recordings.episode import Episode, FrameTruth
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    from robo_reward_ros.simulation.synthetic_scene import render_scene, scene_progress
    bags = []
    for k in range(count):
        shown = [Frame(round(0.1 * i, 6), render_scene(i + k, 320, 240, frames)) for i in range(frames)]
        truth = [FrameTruth(0, scene_progress(i + k, frames) >= 1.0, scene_progress(i + k, frames))
                 for i in range(frames)]
        episode = Episode(f"scene_{k:03d}", ("put the red block on the green goal",), shown, truth,
                          outcome="success", task="place", source="bench")
        bags.append(write_episode_bag(episode, os.path.join(root, episode.name)))
    return bags


def ray_run(values, bags, out, reading, key, workers):
    """Replay on Ray with ``workers``; return wall seconds, the arrival time of each result, and the traces."""
    from robo_reward_ros.replay.ray_replay import RayOptions, replay_bags_on_ray
    arrivals = []
    start = time.perf_counter()
    done, _ = replay_bags_on_ray(values, bags, out, reading, key, True, False, RayOptions(workers=workers),
                                 progress_bar=False, log=lambda _: None,
                                 on_result=lambda _: arrivals.append(time.perf_counter() - start))
    wall = time.perf_counter() - start
    steady_from = arrivals[min(workers, len(arrivals)) - 1]
    steady = (len(arrivals) - workers) / (arrivals[-1] - steady_from) * 60.0 if arrivals[-1] > steady_from else None
    return {"workers": workers, "wall_s": wall, "episodes": len(done.traces), "errors": done.errors,
            "episodes_per_min_wall": len(done.traces) / wall * 60.0, "episodes_per_min_steady": steady,
            "arrivals_s": common.list_of(arrivals, 3)}, done


def rows_of(traces):
    """Return the estimates and events, without the model's wall time (the one field two runs differ in)."""
    import dataclasses
    rows = []
    for trace in traces:
        rows += [{k: v for k, v in dataclasses.asdict(e).items() if k != "latency_s"} for e in trace.estimates]
        rows += [dataclasses.asdict(e) for e in trace.events]
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=24)
    parser.add_argument("--frames", type=int, default=60, help="frames per episode (10 Hz)")
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 4, 8], help="GPU counts to project")
    parser.add_argument("--project-episode-sec", type=float, default=60.0,
                        help="episode length for the projection (30 Hz camera, node's 2 Hz steps)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    common.use_source_tree()
    # Ray's workers are started with this environment: they import this checkout too.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (common.PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    from robo_reward_ros.replay.bag_replay import replay_bags
    from robo_reward_ros.replay.ray_replay import RayOptions, ray_runtime
    from robo_reward_ros.recordings.robot_recording import RecordingOptions
    from robo_reward_ros.replay.offline_replay import OfflineReplay, node_parameter_values
    from robo_reward_ros.replay.scored_episodes import run_key
    from robo_reward_ros.models.testing.tiny_checkpoints import build_robometer

    load_before = os.getloadavg()  # a shared machine: other work competes for the two cores
    root = tempfile.mkdtemp(prefix="bench_ray_replay_")
    model = build_robometer(os.path.join(root, "robometer"))
    bags = make_bags(os.path.join(root, "bags"), args.episodes, args.frames)
    values = node_parameter_values(model)
    reading = RecordingOptions()
    key = run_key(values, reading.describe())

    import torch
    torch.set_num_threads(1)  # as Ray gives each worker (OMP_NUM_THREADS=1): the comparison is Ray's cost
    start = time.perf_counter()
    replayer = OfflineReplay(values)
    load_s = time.perf_counter() - start
    single = replay_bags(replayer, bags, os.path.join(root, "single"), reading, key, True, False)
    single_s = time.perf_counter() - start
    replayer.close()
    estimates = [e for t in single.traces for e in t.estimates]

    runs = []
    start = time.perf_counter()
    with ray_runtime(RayOptions(workers=2), log=lambda _: None):
        runtime_s = time.perf_counter() - start
        for workers in (1, 2):
            run, done = ray_run(values, bags, os.path.join(root, f"ray{workers}"), reading, key, workers)
            run["same_outputs_as_single_process"] = rows_of(done.traces) == rows_of(single.traces)
            runs.append(run)
            if workers == 1:
                one_done = done
    one, two = runs
    model_s = sum(e.latency_s for t in one_done.traces for e in t.estimates)  # the 1-worker run's model time
    ratio = (two["episodes_per_min_steady"] / one["episodes_per_min_steady"]
             if one["episodes_per_min_steady"] and two["episodes_per_min_steady"] else None)
    ratio_wall = two["episodes_per_min_wall"] / one["episodes_per_min_wall"]

    # Projection: the measured non-model cost per frame + the H200's measured 4B step.
    per_episode_1w = 60.0 / one["episodes_per_min_steady"]
    steps_per_episode = len(estimates) / len(single.traces)
    model_per_episode_cpu = model_s / len(single.traces)
    other_per_frame = max(0.0, per_episode_1w - model_per_episode_cpu) / args.frames
    with open(GPU_RESULT) as handle:
        gpu = next(r for r in json.load(handle)["results"]
                   if r["backend"] == "robometer" and r["precision"] == "bf16")
    frames_p = int(args.project_episode_sec * 30)
    steps_p = int(args.project_episode_sec * 2) + 1
    per_episode_gpu = frames_p * other_per_frame + steps_p * gpu["cached_median_s"]
    efficiency = min(1.0, ratio / 2.0) if ratio else 1.0
    # Linear (each worker has its own GPU and cores) and at the efficiency this shared 2-core machine showed.
    projection = [{"gpus": n, "episodes_per_min_linear": n * 60.0 / per_episode_gpu,
                   "episodes_per_min_at_measured_efficiency": n * 60.0 / per_episode_gpu * efficiency,
                   "hours_for_10000_episodes_linear": 10000 / (n * 60.0 / per_episode_gpu) / 60.0}
                  for n in args.gpus]

    print(f"{args.episodes} episodes x {args.frames} frames (320x240, 10 Hz), tiny Robometer, CPU; "
          f"{len(estimates)} steps in all; local Ray runtime started in {runtime_s:.1f} s")
    print(f"single process (no Ray): model load {load_s:.1f} s, {single_s:.1f} s in all, "
          f"{args.episodes / single_s * 60:.1f} episodes/min (1 torch thread, as each Ray worker)")
    print(common.table(["workers", "wall s", "episodes/min (wall)", "episodes/min (steady)", "same outputs"],
                       [[r["workers"], r["wall_s"], r["episodes_per_min_wall"], r["episodes_per_min_steady"],
                         r["same_outputs_as_single_process"]] for r in runs]))
    load_after = os.getloadavg()
    print(f"2 vs 1 workers: x{ratio:.2f} steady, x{ratio_wall:.2f} wall (actor start and model load included); "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after ({os.cpu_count()} CPUs)")
    print(f"\nPROJECTION (arithmetic, not measured): {args.project_episode_sec:g} s episodes at 30 Hz "
          f"({frames_p} frames, {steps_p} steps); per frame {other_per_frame * 1000:.1f} ms non-model "
          f"(measured here: {per_episode_1w:.2f} s/episode with 1 worker, of which model "
          f"{model_per_episode_cpu:.2f} s) + per step {gpu['cached_median_s'] * 1000:.1f} ms "
          f"(Robometer-4B bf16, H200, bench/results/gpu) = {per_episode_gpu:.1f} s/episode per GPU; "
          f"linear in GPUs, and x{efficiency:.2f} (the 1->2 worker efficiency measured here)")
    print(common.table(["GPUs (1 worker each)", "episodes/min linear", f"episodes/min x{efficiency:.2f}",
                        "hours per 10k episodes (linear)"],
                       [[p["gpus"], p["episodes_per_min_linear"], p["episodes_per_min_at_measured_efficiency"],
                         p["hours_for_10000_episodes_linear"]] for p in projection]))
    common.write_json(args.json, {
        "benchmark": "ray_replay", "machine": common.machine(),
        "load_average_1min": [load_before[0], load_after[0]], "episodes": args.episodes,
        "frames_per_episode": args.frames, "frame_size": "320x240", "steps": len(estimates),
        "ray_runtime_start_s": runtime_s, "single_process": {"model_load_s": load_s, "wall_s": single_s,
                                                             "episodes_per_min": args.episodes / single_s * 60},
        "runs": runs, "ratio_2_vs_1_steady": ratio, "ratio_2_vs_1_wall": ratio_wall,
        "measured_per_episode_s_1_worker": per_episode_1w, "model_s_per_episode_cpu": model_per_episode_cpu,
        "steps_per_episode": steps_per_episode, "non_model_s_per_frame": other_per_frame,
        "projection": {"note": "PROJECTION, not measured: non-model cost per frame measured here + "
                               "Robometer-4B bf16 step measured on an H200, one worker per GPU, scaled "
                               "linearly and at the 1->2 worker efficiency measured here",
                       "episode_sec": args.project_episode_sec, "frames": frames_p, "steps": steps_p,
                       "gpu_step_s": gpu["cached_median_s"],
                       "gpu_step_source": os.path.relpath(GPU_RESULT, common.REPO),
                       "per_episode_s_per_gpu": per_episode_gpu, "efficiency": efficiency, "nodes": projection}})
    same = all(r["same_outputs_as_single_process"] and not r["errors"] for r in runs)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
