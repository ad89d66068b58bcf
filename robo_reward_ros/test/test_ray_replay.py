# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward replay --ray``: bags spread over two local Ray workers give what one process gives.

One local Ray runtime (2 CPUs) for the module, started by the project's own ``ray_runtime``. Its
workers import the package and the scripted backend from this checkout; their scripted backend
takes 0.1 s a step and writes its process id to a marker file when a step starts, so a test can
kill a worker in the middle of a bag. The driver's own (single-process) runs are not slowed.
"""
import contextlib
import io
import json
import math
import os
import shutil
import signal
import threading
import time

import pytest

pytest.importorskip("ray.data", reason="Ray Data is not installed (requirements/scale.txt)")
pytest.importorskip("rosbags", reason="rosbags is not installed")

from robo_reward_ros.core.frame import Frame  # noqa: E402
from robo_reward_ros.recordings.episode import Episode, FrameTruth  # noqa: E402

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(TEST_DIR)
RULES = ["inference.rate_hz=2", "failure.stall_window_sec=1.5"]
SCRIPTED = ["model.plugin_modules=scripted_backend"] + RULES
WORKER_ENV = {"PIXEL_SCRIPTED_DELAY_SEC": "0.1"}


@pytest.fixture(scope="module")
def step_marker(tmp_path_factory):
    return str(tmp_path_factory.mktemp("marker") / "steps")


@pytest.fixture(scope="module")
def ray_cluster(step_marker):
    """Start a local runtime whose workers (started now, with this environment) find the test's backend."""
    import ray
    from robo_reward_ros.replay.ray_replay import RayOptions, ray_runtime
    if ray.is_initialized():  # left by another module: its workers lack this module's environment
        ray.shutdown()
    saved = dict(os.environ)
    os.environ.update({**WORKER_ENV, "PIXEL_SCRIPTED_STEP_STARTED": step_marker,
                       "PYTHONPATH": os.pathsep.join(p for p in (SOURCE, TEST_DIR, saved.get("PYTHONPATH")) if p)})
    try:
        with ray_runtime(RayOptions(workers=2), log=lambda _: None):
            os.environ.clear()
            os.environ.update(saved)
            assert ray.cluster_resources()["CPU"] == 2
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _scene_episode(name, frames, start):
    """Draw a small tabletop clip with its truth (the project's own bag layout)."""
    from robo_reward_ros.simulation.synthetic_scene import render_scene, scene_progress
    shown = [Frame(round(0.1 * i, 6), render_scene(i + start, 64, 64, frames)) for i in range(frames)]
    truth = [FrameTruth(0, scene_progress(i + start, frames) >= 1.0, scene_progress(i + start, frames))
             for i in range(frames)]
    return Episode(name, ("put the red block on the green goal",), shown, truth, outcome="success",
                   task="place", source="test")


@pytest.fixture(scope="module")
def model_bags(tmp_path_factory):
    """Three of the project's own bags, a robot's recording, and a bag whose storage file is cut short."""
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    from robot_recordings import ramp, write_recording
    root = tmp_path_factory.mktemp("model_bags")
    for k in range(3):
        write_episode_bag(_scene_episode(f"scene_{k}", 12, 3 * k), str(root / f"scene_{k}"))
    write_recording(str(root / "robot"), {"/camera/image_raw": "rgb8"}, [("pick up the cube", ramp(12))],
                    instruction_topic="/instruction", size=(64, 64))
    broken = root / "scene_broken"
    shutil.copytree(root / "scene_1", broken)
    (storage,) = broken.glob("*.mcap")
    with open(storage, "r+b") as handle:
        handle.truncate(os.path.getsize(storage) // 3)
    return str(root)


@pytest.fixture(scope="module")
def model_runs(ray_cluster, model_bags, tiny_robometer_dir, tmp_path_factory):
    """Replay the same bags with the tiny Robometer: in this process, and through the CLI with --ray."""
    from robo_reward_ros.cli.replay import main
    from robo_reward_ros.replay.replay_run import run_replay
    single = str(tmp_path_factory.mktemp("single"))
    single_summary = run_replay([model_bags], single, model=tiny_robometer_dir, params=RULES,
                                progress_bar=False, plots=False, log=lambda _: None)
    on_ray = str(tmp_path_factory.mktemp("on_ray"))
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        code = main([model_bags, "--model", tiny_robometer_dir, *sum((["-p", r] for r in RULES), []),
                     "--out", on_ray, "--quiet", "--no-plots", "--ray", "--ray-workers", "2"])
    return {"single": single, "single_summary": single_summary, "ray": on_ray, "code": code,
            "stderr": stderr.getvalue(), "bags": model_bags}


def _rows(out, kind):
    with open(os.path.join(out, f"{kind}.jsonl")) as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    for row in rows:
        row.pop("latency_s", None)  # the model's wall time: the one field two runs cannot share
    return rows


def _episodes(out):
    with open(os.path.join(out, "episodes.json")) as handle:
        return json.load(handle)


def _assert_same_to_round_off(got, want, where="rows", exact=False):
    """Assert equality except for float32 round-off in model outputs; stamps must match exactly.

    A Ray worker runs torch on its CPU share (one thread), the driver on all cores, and another
    intra-op split changes the last bits of a sum.
    """
    if isinstance(want, float) and isinstance(got, (int, float)) and not exact:
        assert math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), f"{where}: {got} != {want}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), f"{where}: {got} != {want}"
        for key in want:
            _assert_same_to_round_off(got[key], want[key], f"{where}.{key}", exact or "stamp" in key)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got} != {want}"
        for index, (a, b) in enumerate(zip(got, want)):
            _assert_same_to_round_off(a, b, f"{where}[{index}]", exact)
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def test_ray_run_writes_the_single_process_runs_estimates_events_and_decisions(model_runs):
    single, on_ray = model_runs["single"], model_runs["ray"]
    _assert_same_to_round_off(_rows(on_ray, "estimates"), _rows(single, "estimates"), "estimates")
    assert len(_rows(single, "estimates")) >= 8
    _assert_same_to_round_off(_rows(on_ray, "events"), _rows(single, "events"), "events")
    # Decisions (detected success, first failure) and every other per-episode field, in bag order.
    _assert_same_to_round_off(_episodes(on_ray)["episodes"], _episodes(single)["episodes"], "episodes")
    assert [e["name"] for e in _episodes(on_ray)["episodes"]] == ["robot", "scene_0", "scene_1", "scene_2"]
    assert sorted(os.listdir(os.path.join(on_ray, "scored"))) == sorted(os.listdir(os.path.join(single, "scored")))
    with open(os.path.join(on_ray, "events.csv")) as a, open(os.path.join(single, "events.csv")) as b:
        assert a.read() == b.read()  # these events' texts quote no model output


def test_an_unreadable_bag_is_reported_and_skipped_and_the_rest_scored(model_runs):
    broken = os.path.join(model_runs["bags"], "scene_broken")
    errors = _episodes(model_runs["ray"])["errors"]
    assert len(errors) == 1 and errors[0].startswith(broken), errors
    assert errors == _episodes(model_runs["single"])["errors"]
    assert model_runs["code"] == 1  # the CLI's exit status says something was skipped
    assert broken in model_runs["stderr"], model_runs["stderr"]
    assert len(_episodes(model_runs["ray"])["episodes"]) == 4


@pytest.fixture(scope="module")
def scripted_bags(tmp_path_factory):
    """Four robot recordings of ten painted frames each: about five 0.1 s steps per bag on a worker."""
    from robot_recordings import ramp, write_recording
    root = tmp_path_factory.mktemp("scripted_bags")
    for k in range(4):
        write_recording(str(root / f"robot_{k}"), {"/camera/image_raw": "rgb8"},
                        [("stack the cups", ramp(10, end=0.2 + 0.2 * k))], instruction_topic="/instruction")
    return str(root)


def _replay_scripted(bags, out, **kwargs):
    from robo_reward_ros.replay.replay_run import run_replay
    return run_replay([bags], out, backend="pixel_scripted", params=SCRIPTED, progress_bar=False,
                      plots=False, log=lambda _: None, **kwargs)


def _marker_pids(path):
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return [int(line) for line in handle.read().split()]


def test_a_worker_killed_mid_bag_has_its_bag_replayed_and_nothing_lost_or_doubled(
        ray_cluster, scripted_bags, step_marker, tmp_path):
    from robo_reward_ros.replay.ray_replay import RayOptions
    single = str(tmp_path / "single")
    _replay_scripted(scripted_bags, single)
    open(step_marker, "w").close()
    on_ray = str(tmp_path / "ray")
    outcome = {}
    run = threading.Thread(target=lambda: outcome.update(
        summary=_replay_scripted(scripted_bags, on_ray, ray=RayOptions(workers=2))))
    run.start()
    deadline = time.monotonic() + 120
    while not _marker_pids(step_marker):  # a worker's first step of its first bag has begun
        assert run.is_alive() and time.monotonic() < deadline, "no worker started a step"
        time.sleep(0.005)
    victim = _marker_pids(step_marker)[0]
    with open(f"/proc/{victim}/cmdline", "rb") as handle:
        assert b"BagReplayWorker" in handle.read()  # Ray's title for the actor's process
    os.kill(victim, signal.SIGKILL)
    run.join(timeout=300)
    assert not run.is_alive()
    summary = outcome["summary"]
    assert summary["errors"] == []
    assert summary["episodes"] == 4 and summary["scored"] + summary["reused"] == 4
    assert _rows(on_ray, "estimates") == _rows(single, "estimates")
    assert _rows(on_ray, "events") == _rows(single, "events")
    names = [e["name"] for e in _episodes(on_ray)["episodes"]]
    assert names == [f"robot_{k}" for k in range(4)]
    # The killed process stepped no more; others (one restarted in its place) finished the bags.
    steps = _marker_pids(step_marker)
    assert victim not in steps[steps.index(victim) + 1:]
    assert len(set(steps) - {victim}) >= 2

    # A second run reuses every scored episode; --force scores them all again, same results.
    again = _replay_scripted(scripted_bags, on_ray, ray=RayOptions(workers=2))
    assert (again["scored"], again["reused"]) == (0, 4)
    assert _rows(on_ray, "estimates") == _rows(single, "estimates")
    forced = _replay_scripted(scripted_bags, on_ray, ray=RayOptions(workers=2), force=True)
    assert (forced["scored"], forced["reused"]) == (4, 0)
    assert _rows(on_ray, "events") == _rows(single, "events")


def test_a_bag_whose_worker_dies_more_often_than_retried_is_reported_and_the_rest_scored(
        ray_cluster, scripted_bags, step_marker, tmp_path):
    from robo_reward_ros.replay.ray_replay import RayOptions
    open(step_marker, "w").close()
    outcome = {}
    run = threading.Thread(target=lambda: outcome.update(summary=_replay_scripted(
        scripted_bags, str(tmp_path / "ray"), ray=RayOptions(workers=2, retries=0))))
    run.start()
    deadline = time.monotonic() + 120
    while not _marker_pids(step_marker):
        assert run.is_alive() and time.monotonic() < deadline, "no worker started a step"
        time.sleep(0.005)
    os.kill(_marker_pids(step_marker)[0], signal.SIGKILL)
    run.join(timeout=300)
    summary = outcome["summary"]
    (error,) = summary["errors"]
    assert "its Ray worker died 1 time(s) replaying it" in error
    lost = os.path.basename(error.split(":")[0])
    assert [e["name"] for e in _episodes(str(tmp_path / "ray"))["episodes"]] == [
        f"robot_{k}" for k in range(4) if f"robot_{k}" != lost]


def test_ray_after_the_bags_or_as_a_path_is_told_apart(tmp_path):
    from robo_reward_ros.cli.replay import build_parser
    from robo_reward_ros.replay.ray_replay import check_address
    parser = build_parser()
    assert parser.parse_args([str(tmp_path), "--ray"]).ray == ""
    assert parser.parse_args([str(tmp_path), "--ray", "10.0.0.5:6379"]).ray == "10.0.0.5:6379"
    assert parser.parse_args([str(tmp_path)]).ray is None
    assert check_address("ray://head:10001") == "ray://head:10001"
    with pytest.raises(ValueError, match="put --ray after the bags"):
        check_address(str(tmp_path))  # robo-reward replay --ray BAGS...: the first bag is no address
