# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What a backend provides is declared on RewardModel, one factory builds every backend, and the client needs no core.

A plugin backend registered the documented way (a module calling ``register_backend``, named in
``--plugin-modules``) must work wherever a built-in one does, ``robo-reward score`` included; the
client is for controllers without torch, so it must import on a machine without it.
"""
import ast
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from ros_fixtures import PACKAGE_ROOT, TEST_DIR
from robo_reward_ros.models.loading import backend_registry
from robo_reward_ros.models.loading.loader import load_reward_model
from robo_reward_ros.models.reward_model import Frame, ModelOutput, RewardModel
from scripted_backend import PixelScriptedBackend, painted


class Minimal(RewardModel):
    """A backend that implements score alone, as a plugin may."""

    def score(self, instruction, frames):
        return ModelOutput(progress=[0.5] * len(frames), stamps=[f.stamp for f in frames], backend=self.name)


def test_a_backend_that_implements_score_alone_has_every_declared_default():
    model = Minimal()
    clips = [[Frame(0.0, np.zeros((4, 4, 3), np.uint8))], [Frame(1.0, np.zeros((4, 4, 3), np.uint8))] * 2]
    assert (model.max_frames, model.device, model.batches_clips) == (None, None, False)
    assert model.reserved_texts() == frozenset()
    assert [list(o.stamps) for o in model.score_batch("x", clips)] == [[0.0], [1.0, 1.0]]
    assert list(model.score_episode("x", clips[1]).progress) == [0.5, 0.5]


def test_callers_ask_the_interface_and_do_not_probe_for_what_it_declares():
    probe = re.compile(r"(getattr|hasattr)\([^()]*[\"'](score_batch|max_frames|device|reserved_texts)[\"']")
    found = []
    for folder, _, names in os.walk(os.path.join(PACKAGE_ROOT, "robo_reward_ros")):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    found += [f"{path}: {m.group(0)}" for m in probe.finditer(handle.read())]
    assert found == []


def test_the_one_factory_builds_a_registered_backend_and_the_registry_needs_no_factory():
    model = load_reward_model("", backend="pixel_scripted", precision="fp32", device="cpu")
    assert isinstance(model, PixelScriptedBackend) and "pixel_scripted" in backend_registry.backend_names()
    with pytest.raises(ValueError, match="built-in backend name"):
        backend_registry.register_backend("robometer", PixelScriptedBackend)
    with pytest.raises(ValueError, match="backend must be one of .*'pixel_scripted'"):
        load_reward_model("", backend="pixel_scriptd")
    with open(backend_registry.__file__, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert "robo_reward_ros.models.loading.loader" not in imported  # the factory uses the registry, not back


def _score_command(*args):
    """``robo-reward score`` in a process of its own, so only --plugin-modules can register the plugin."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([TEST_DIR, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "robo_reward_ros.cli.main", "score", *args], cwd=PACKAGE_ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def test_a_plugin_backend_scores_through_robo_reward_score(tmp_path):
    frames = tmp_path / "frames"
    frames.mkdir()
    for index, progress in enumerate((0.2, 0.4, 0.8)):
        Image.fromarray(painted(progress, 0.1)).save(frames / f"{index:03d}.png")
    common = ["--backend", "pixel_scripted", "--model", "painted", "--instruction", "stack", "--json", str(frames)]
    result = _score_command("--plugin-modules", "scripted_backend", *common)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["backend"] == "pixel_scripted" and data["stamps"] == [0.0, 0.5, 1.0]
    np.testing.assert_allclose(data["progress"], [0.2, 0.4, 0.8], atol=0.01)
    refused = _score_command(*common)  # without the module the name is unknown, before any frame is read
    assert refused.returncode == 2 and "invalid choice: 'pixel_scripted'" in refused.stderr


CLIENT_WITHOUT_TORCH = r"""
import importlib.abc, json, sys

class NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ImportError("torch is not installed on this controller")
        return None

sys.meta_path.insert(0, NoTorch())
import robo_reward_ros.client
import robo_reward_ros.client.gym_env
print(json.dumps(sorted(m for m in sys.modules if m.startswith("robo_reward_ros"))))
"""


def test_the_client_and_its_gym_env_import_without_torch_and_without_the_core():
    """Of the core, only the stamp arithmetic (stdlib alone): no pipeline, monitor or model."""
    result = subprocess.run([sys.executable, "-c", CLIENT_WITHOUT_TORCH], cwd=PACKAGE_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert "robo_reward_ros.client.gym_env" in loaded
    light = {"robo_reward_ros.core", "robo_reward_ros.core.stamps"}
    assert [m for m in loaded if m.startswith(("robo_reward_ros.core", "robo_reward_ros.models"))
            and m not in light] == []
