# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The core, the models and the offline tools run without ROS.

Importing any of their modules never imports rclpy or a ROS message package (the offline tools,
the benchmarks and a machine without ROS depend on it; only ``node/``, ``client/`` and the demo
talk to ROS). test_import_layers.py checks the same of imports inside functions.
"""
import json
import subprocess
import sys

from ros_fixtures import PACKAGE_ROOT

ROS_FREE = ("core", "models", "settings", "serving", "recordings", "replay", "simulation",
            "visualisation", "evaluation", "training", "cli")
TALK_TO_ROS = ("robo_reward_ros.node.live_replay",)

PROBE = r"""
import importlib, importlib.abc, json, pkgutil, sys
blocked = ("rclpy", "rcl_interfaces", "sensor_msgs", "std_msgs", "diagnostic_msgs",
           "robo_reward_msgs", "rosidl_runtime_py")
attempts = []

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            attempts.append((name, current))
            raise ImportError(f"{name} imported from a ROS-free module")
        return None

sys.meta_path.insert(0, Refuse())
import robo_reward_ros
modules = []
for package in sys.argv[1].split(","):
    root = importlib.import_module("robo_reward_ros." + package)
    modules.append(root.__name__)
    modules += [m.name for m in pkgutil.walk_packages(root.__path__, root.__name__ + ".")]
failures = {}
current = ""
for name in modules:
    if name in sys.argv[2].split(","):
        continue
    current = name
    try:
        importlib.import_module(name)
    except Exception as exc:
        failures[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"modules": modules, "attempts": attempts, "failures": failures}))
"""


def test_core_models_and_offline_tools_import_no_ros():
    result = subprocess.run([sys.executable, "-c", PROBE, ",".join(ROS_FREE), ",".join(TALK_TO_ROS)],
                            cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert "robo_reward_ros.core.reward_pipeline" in report["modules"]
    assert "robo_reward_ros.models.backends.robometer" in report["modules"]
    assert report["attempts"] == [], f"ROS imported by: {report['attempts']}"
    assert report["failures"] == {}, report["failures"]
