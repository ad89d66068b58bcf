# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The committed demo model reads task progress from the images of episodes it never trained on.

It was trained here with ``robo-reward finetune``, see training/demo_model.py.

Seed-0 Meta-World episodes are held out of its training set (training/metaworld_set.py).
"""
import os

import numpy as np
import pytest

from model_fixtures import make_frames


def progress_curve(backend, episode, points=6):
    frames = episode.frames[::2]
    ends = np.linspace(4, len(frames) - 1, points).astype(int)
    return np.array([backend.score(episode.instructions[0], frames[:end + 1]).progress[-1] for end in ends])


@pytest.fixture(scope="module")
def demo_model():
    from robo_reward_ros.models.loading.bundled_demo import trained_demo_checkpoint, trained_model_source
    from robo_reward_ros.models.backends.robometer import RobometerBackend
    assert trained_model_source(), "the demo model's weights are missing from robo_reward_ros/data/demo-robometer"
    return RobometerBackend(trained_demo_checkpoint(), precision="fp32", device="cpu")


def test_demo_model_is_small_enough_to_commit():
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_FILES, TRAINED_MODEL_DIR
    size = sum(os.path.getsize(os.path.join(TRAINED_MODEL_DIR, n)) for n in TRAINED_FILES)
    assert size < 25e6


def test_progress_rises_on_a_held_out_success_and_falls_when_the_puck_is_dropped(demo_model):
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from robo_reward_ros.simulation.metaworld_episodes import generate_episode, scenario_by_name
    expert = progress_curve(demo_model, generate_episode(scenario_by_name("pick_place_expert"), 100, 224))
    dropped = progress_curve(demo_model, generate_episode(scenario_by_name("pick_place_dropped"), 100, 224))
    assert expert[-1] > 0.6 and expert[-1] > expert[0] + 0.4, expert
    assert dropped[-1] < expert[-1] - 0.3, (dropped, expert)


def test_the_installed_weights_directory_and_the_demo_preset_load_offline(tmp_path, monkeypatch):
    """Before: the installed directory's config.yaml names a hub base model, so a load retried the hub.

    Tests run with HF_HUB_OFFLINE=1 (conftest), as a robot without a network would.
    """
    from robo_reward_ros.models import load_reward_model
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR
    from robo_reward_ros.models.loading.presets import resolve_preset
    monkeypatch.setenv("ROBO_REWARD_CACHE", str(tmp_path))  # nothing prepared before
    preset = resolve_preset("demo")
    assert (preset.backend, preset.model_id, preset.precision) == ("robometer", TRAINED_MODEL_DIR, "fp32")
    model = load_reward_model(preset.model_id, preset.backend, preset.precision, device="cpu")
    output = model.score("pick up the puck", make_frames(3, 224, 224))
    assert len(output.progress) == 3 and all(0.0 <= p <= 1.0 for p in output.progress)
    assert os.path.isfile(tmp_path / "demo-robometer-trained" / "config.yaml")  # the loadable copy


def test_a_build_lock_held_too_long_is_an_error_naming_it_not_a_hang(tmp_path, monkeypatch):
    import subprocess
    import sys
    from robo_reward_ros.models.loading import bundled_demo
    entry = str(tmp_path / "demo-bags")
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom filelock import FileLock\n"
                               "lock = FileLock(sys.argv[1]); lock.acquire()\n"
                               "print('held', flush=True); time.sleep(60)",
                               entry + ".lock"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(bundled_demo, "BUILD_LOCK_TIMEOUT_SEC", 0.5)
        with pytest.raises(RuntimeError, match="another process has held .*demo-bags.lock for 0.5 s"):
            with bundled_demo.building(entry):
                pytest.fail("entered a cache entry another process is building")
    finally:
        holder.kill()
        holder.wait(10)
    with bundled_demo.building(entry):  # released by the holder's exit: taken at once
        pass


def installed_copy(folder):
    """Copy the installed demo weights to ``folder``: the package as imported from somewhere else."""
    import shutil
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR
    shutil.copytree(TRAINED_MODEL_DIR, folder)
    return str(folder)


def test_the_same_weights_imported_from_two_places_share_the_cache_entry_without_rebuilding(tmp_path, monkeypatch):
    """Before: the stamp held the weights' folder, and the entry was rebuilt in turn under loads.

    The tests import the source tree, the CLIs they start the installed package: each rebuilt the
    entry in place under the other's loads ('corrupt or truncated safetensors file', CI, 2026-12-07).
    """
    from robo_reward_ros.models.loading import bundled_demo
    monkeypatch.setenv("ROBO_REWARD_CACHE", str(tmp_path / "cache"))
    builds = []
    for place in ("source-tree", "site-packages"):
        monkeypatch.setattr(bundled_demo, "TRAINED_MODEL_DIR", installed_copy(tmp_path / place))
        path = bundled_demo.trained_demo_checkpoint(log=builds.append)
    assert path == str(tmp_path / "cache" / "demo-robometer-trained")
    assert len(builds) == 1, builds  # the second place found the entry built


def test_a_rebuild_replaces_files_so_a_loader_reading_the_old_ones_still_reads_them_whole(tmp_path, monkeypatch):
    import hashlib
    from robo_reward_ros.models.loading import bundled_demo
    monkeypatch.setenv("ROBO_REWARD_CACHE", str(tmp_path / "cache"))
    weights = installed_copy(tmp_path / "weights")
    monkeypatch.setattr(bundled_demo, "TRAINED_MODEL_DIR", weights)
    shard = "model-00001-of-00002.safetensors"
    entry = bundled_demo.trained_demo_checkpoint(log=lambda text: None)
    with open(os.path.join(entry, shard), "rb") as loading:  # a loader has opened the entry's shard
        before = hashlib.sha256(open(os.path.join(weights, shard), "rb").read()).hexdigest()
        with open(os.path.join(weights, shard), "r+b") as retrained:  # new weights, same size
            retrained.seek(-16, os.SEEK_END)
            retrained.write(b"\x00" * 16)
        builds = []
        assert bundled_demo.trained_demo_checkpoint(log=builds.append) == entry
        assert len(builds) == 1, builds  # the changed contents were noticed
        assert hashlib.sha256(loading.read()).hexdigest() == before  # the old file, whole
    after = hashlib.sha256(open(os.path.join(entry, shard), "rb").read()).hexdigest()
    assert after == hashlib.sha256(open(os.path.join(weights, shard), "rb").read()).hexdigest() != before
    assert not [n for n in os.listdir(entry) if n.endswith(".tmp")]


def test_the_training_report_replays_with_the_demo_s_scoring_rules_which_the_replay_accepts():
    """The report's replays failed: the demo's operator settings went in as 'operator.confirm_decisions=1'."""
    from robo_reward_ros.replay.offline_replay import node_parameter_values, parse_param
    from robo_reward_ros.training.demo_model import NODE_PARAMS
    assert sorted(p.split("=")[0] for p in NODE_PARAMS) == [
        "failure.low_progress_grace_sec", "failure.stall_window_sec", "inference.rate_hz"]
    values = node_parameter_values("", overrides=dict(parse_param(p) for p in NODE_PARAMS))
    assert values["failure.stall_window_sec"] == 4.0 and values["operator.confirm_decisions"] is False
