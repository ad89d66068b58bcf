# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The installed reward node on a Jetson-shaped install: the model stack from pip, bitsandbytes left out.

The node runs under a real interpreter whose site-packages hold everything of the project venv but
bitsandbytes (a fresh venv of symbolic links), so ``import bitsandbytes`` fails there exactly as on
a Jetson that skipped the package. With the torchao preset it scores; with the nf4 preset it stays
up, unconfigured, and names the torchao preset.
"""
import os
import subprocess
import sys
import sysconfig

import pytest

from ros_fixtures import installed_executable, spin_until
from test_reward_node import Listener

pytest.importorskip("torchao")

INSTRUCTION = "stack the cups"


@pytest.fixture(scope="module")
def python_without_bitsandbytes(tmp_path_factory):
    """Python of a venv that links every package of this one except bitsandbytes."""
    venv = tmp_path_factory.mktemp("jetson-shaped") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    target = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                            check=True, capture_output=True, text=True).stdout.strip()
    source = sysconfig.get_paths()["purelib"]
    for name in os.listdir(source):
        if not name.lower().startswith("bitsandbytes"):
            os.symlink(os.path.join(source, name), os.path.join(target, name))
    missing = subprocess.run([python, "-c", "import bitsandbytes"], capture_output=True, text=True)
    assert missing.returncode != 0 and "No module named 'bitsandbytes'" in missing.stderr
    return python


def _node(python, model_dir, preset):
    return [python, installed_executable("reward_node"), "--ros-args",
            "-p", f"model.preset:={preset}", "-p", f"model.id:={model_dir}", "-p", "model.device:=cpu",
            "-p", f"instruction:={INSTRUCTION}", "-p", 'episode_log.directory:=""']


def test_the_torchao_preset_scores_without_bitsandbytes(ros_node, spawn, python_without_bitsandbytes,
                                                        tiny_robometer_dir):
    camera = spawn([installed_executable("synthetic_camera")])
    node = spawn(_node(python_without_bitsandbytes, tiny_robometer_dir, "robometer-4b-int4wo"))
    listen = Listener(ros_node)
    spin_until(ros_node, lambda: listen.estimates and listen.estimates[-1].instruction == INSTRUCTION,
               what="reward estimates from the node without bitsandbytes", processes=[camera, node])
    estimate = listen.estimates[-1]
    assert estimate.backend == "robometer" and estimate.precision == "int4wo"
    assert 0.0 <= estimate.progress <= 1.0
    for process in (camera, node):
        assert process.interrupt() == 0, process.output()


def test_an_nf4_preset_without_bitsandbytes_stays_up_and_names_the_torchao_preset(
        ros_node, spawn, python_without_bitsandbytes, tiny_robometer_dir):
    node = spawn(_node(python_without_bitsandbytes, tiny_robometer_dir, "robometer-4b-nf4"))
    listen = Listener(ros_node)

    def model_status():
        statuses = [s for a in listen.diagnostics for s in a.status if s.name.endswith(": model")]
        return statuses[-1] if statuses else None

    # While configure loads, the model status says "loading" (a warning); then it says why it failed.
    spin_until(ros_node, lambda: model_status() is not None and "configure failed" in model_status().message,
               what="the failed configure in diagnostics", processes=[node])
    status = model_status()
    assert status.level == b"\x02" and listen.diagnostic(": model", "loaded") == "False"
    assert "bitsandbytes" in status.message and "robometer-4b-int4wo" in status.message
    assert node.popen.poll() is None  # still running, unconfigured
    assert node.interrupt() == 0
