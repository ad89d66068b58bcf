# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The node, the core and the single-process replay import and run on a robot without Ray.

Ray (requirements/scale.txt) is only for ``replay --ray`` and ``serve``; a subprocess refuses any
import of it, imports the node and the replay modules, replays a bag, and asks for ``--ray``.
"""
import json
import subprocess
import sys

import pytest

from ros_fixtures import PACKAGE_ROOT

pytest.importorskip("rosbags", reason="rosbags is not installed")

PROBE = r"""
import contextlib, importlib, importlib.abc, io, json, os, sys
attempts = []

class RefuseRay(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "ray":
            attempts.append(name)
            raise ImportError(f"{name}: Ray is not installed on this robot")
        return None

sys.meta_path.insert(0, RefuseRay())
sys.path.insert(0, sys.argv[2])  # the scripted backend
for name in ("robo_reward_ros.node.reward_node", "robo_reward_ros.core.reward_pipeline",
             "robo_reward_ros.replay.replay_run", "robo_reward_ros.replay.bag_replay",
             "robo_reward_ros.replay.offline_replay", "robo_reward_ros.replay.ray_replay",
             "robo_reward_ros.cli.main", "robo_reward_ros.cli.replay"):
    importlib.import_module(name)
imported = list(attempts)
from robo_reward_ros.cli.replay import main
bag, out = sys.argv[1], sys.argv[3]
args = [bag, "--backend", "pixel_scripted", "-p", "model.plugin_modules=scripted_backend", "--quiet", "--no-plots"]
with contextlib.redirect_stdout(io.StringIO()):
    plain = main(args + ["--out", os.path.join(out, "plain")])
err = io.StringIO()
with contextlib.redirect_stderr(err):
    on_ray = main(args + ["--out", os.path.join(out, "ray"), "--ray"])
print(json.dumps({"imported": imported, "plain": plain, "ray": on_ray, "stderr": err.getvalue()}))
"""


def test_node_core_and_replay_import_and_run_without_ray(tmp_path):
    from robot_recordings import ramp, write_recording
    from ros_fixtures import TEST_DIR
    bag = write_recording(str(tmp_path / "bag"), {"/camera/image_raw": "rgb8"}, [("stack the cups", ramp(6))],
                          instruction_topic="/instruction")
    result = subprocess.run([sys.executable, "-c", PROBE, bag, TEST_DIR, str(tmp_path)], cwd=PACKAGE_ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["imported"] == [], f"imported without --ray: {report['imported']}"
    assert report["plain"] == 0
    assert report["ray"] == 1
    assert "--ray needs Ray Data: pip install -r requirements/scale.txt" in report["stderr"]
