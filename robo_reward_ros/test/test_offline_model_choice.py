# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Which model the offline tools run: the node's parameters mean what they mean to the node.

Before: ``-p model.preset=demo`` was silently ignored by ``robo-reward replay`` and a tiny random
checkpoint scored the episodes; the demo model's folder in the source tree spent minutes
retrying the hub and failed; every tool printed torchao's load failures and torch's deprecations.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")

from robot_recordings import ramp, write_recording  # noqa: E402

SCENE = "/scene/image_raw"


def test_model_flags_and_parameters_resolve_as_the_node_reads_them():
    from robo_reward_ros.settings.node_settings import model_settings
    from robo_reward_ros.replay.offline_replay import offline_parameter_values
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR

    def resolved(**kwargs):
        values, tiny = offline_parameter_values(**kwargs)
        spec = model_settings(values)
        return spec.backend, spec.model_id, spec.precision, tiny

    demo = ("robometer", TRAINED_MODEL_DIR, "fp32", False)
    assert resolved() == demo  # no model named: the demo preset, not random weights
    assert resolved(params=["model.preset=demo"]) == demo
    assert resolved(model="/ckpt") == ("auto", "/ckpt", "fp32", False)
    assert resolved(model="/ckpt", backend="roboreward", precision="bf16") == (
        "roboreward", "/ckpt", "bf16", False)
    # -p model.id with a preset: the preset's backend and precision, as in the node
    assert resolved(params=["model.preset=robometer-4b", "model.id=/mine"]) == (
        "robometer", "/mine", "bf16", False)
    backend, model_id, _, tiny = resolved(model="tiny-random")
    assert (backend, tiny) == ("robometer", True) and model_id.endswith("demo-robometer-tiny")


def _replay(args, tmp_path):
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    done = subprocess.run([sys.executable, "-m", "robo_reward_ros.cli.main", "replay", *args],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    return done.returncode, done.stdout, done.stderr


def test_replay_runs_the_preset_it_is_given_says_which_and_prints_no_library_noise(tmp_path):
    bag = write_recording(str(tmp_path / "bag"), {SCENE: "rgb8"}, [("close the drawer", ramp(12))])
    common = [bag, "--no-plots", "--quiet", "--instruction-topic", "/task"]
    status, out, err = _replay(common + ["--out", "demo", "-p", "model.preset=demo"], tmp_path)
    assert status == 0, err
    assert "model preset demo: robometer " in out and "TINY RANDOM" not in out
    info = json.load(open(tmp_path / "demo" / "episodes.json"))
    assert (info["backend"], info["tiny_random_model"]) == ("robometer", False)
    assert os.path.basename(info["model"]) == "demo-robometer"
    # What a user cannot act on stays off the console (torchao's extension loads, torch's enums).
    assert "Failed to load" not in err and "_pytree" not in err and "torchao" not in err, err

    status, out, err = _replay(common + ["--out", "tiny", "--model", "tiny-random"], tmp_path)
    assert status == 0, err
    assert "TINY RANDOM MODEL: random weights, the figures mean nothing" in out
    assert json.load(open(tmp_path / "tiny" / "episodes.json"))["tiny_random_model"] is True


LOAD = """
import sys, time
from robo_reward_ros.models import load_reward_model
started = time.monotonic()
try:
    model = load_reward_model(sys.argv[1], precision="fp32", device="cpu")
except Exception as exc:
    print("FAILED", type(exc).__name__, exc)
else:
    print("LOADED", model.name)
print("SECONDS", time.monotonic() - started)
"""


def _load(path, tmp_path):
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_ENDPOINT": "http://127.0.0.1:9",
           "ROBO_REWARD_CACHE": str(tmp_path / "cache")}
    env.pop("HF_HUB_OFFLINE", None)  # a robot's network is on; the hub just cannot be reached
    done = subprocess.run([sys.executable, "-c", LOAD, str(path)], env=env, capture_output=True,
                          text=True, timeout=300)
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    return lines, done.stdout + done.stderr


def test_the_demo_model_loads_from_any_copy_and_a_base_model_offline_fails_in_seconds(tmp_path):
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR
    copy = tmp_path / "my models" / "demo-robometer"
    shutil.copytree(TRAINED_MODEL_DIR, copy)  # e.g. the source tree's copy, not the installed one
    lines, output = _load(copy, tmp_path)
    assert lines.get("LOADED") == "robometer", output

    # Another architecture that names the same hub base model: the hub lookup fails at once.
    other = tmp_path / "other"
    shutil.copytree(TRAINED_MODEL_DIR, other)
    config = json.loads((other / "config.json").read_text())
    config["note"] = "fine-tuned elsewhere"
    (other / "config.json").write_text(json.dumps(config))
    lines, output = _load(other, tmp_path)
    assert lines.get("FAILED", "").startswith("CheckpointError"), output
    assert "base model 'Qwen/Qwen3-VL-4B-Instruct' could not be loaded" in output
    assert "http://127.0.0.1:9 could not be reached" in output and "hf download" in output
    assert "Retrying" not in output
    assert float(lines["SECONDS"]) < 60, output  # before: about 3 minutes of retries
