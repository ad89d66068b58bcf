# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Each executable the package installs starts, joins the ROS graph and stops cleanly on SIGINT."""
import configparser
import os

import pytest

from ros_fixtures import PACKAGE_ROOT, installed_executable, spin_until


def console_scripts():
    """Console scripts declared in setup.py (name -> module:function)."""
    import ast
    tree = ast.parse(open(os.path.join(PACKAGE_ROOT, "setup.py")).read())
    for call in ast.walk(tree):
        if isinstance(call, ast.Dict):
            keys = [k.value for k in call.keys if isinstance(k, ast.Constant)]
            if "console_scripts" in keys:
                scripts = ast.literal_eval(call.values[keys.index("console_scripts")])
                return dict(entry.replace(" ", "").split("=", 1) for entry in scripts)
    raise AssertionError("setup.py declares no console_scripts")


def test_setup_cfg_installs_scripts_where_ros2_run_finds_them():
    config = configparser.ConfigParser()
    config.read(os.path.join(PACKAGE_ROOT, "setup.cfg"))
    assert config["install"]["install_scripts"] == "$base/lib/robo_reward_ros"


# Node name each executable must bring up.
EXPECTED_NODES = {"reward_node": "reward_node", "synthetic_camera": "synthetic_camera",
                  "operator_overlay": "operator_overlay"}


# Command-line tools (not nodes): each must answer --help without error, naming this in it.
EXPECTED_TOOLS = {"robo-reward": "score", "operator_console": "--node-name"}


def test_every_console_script_is_covered():
    assert set(console_scripts()) == set(EXPECTED_NODES) | set(EXPECTED_TOOLS)


@pytest.mark.parametrize("tool", sorted(EXPECTED_TOOLS))
def test_tool_answers_help(tool):
    import subprocess
    result = subprocess.run([installed_executable(tool), "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout and EXPECTED_TOOLS[tool] in result.stdout


def test_robo_reward_refuses_an_unknown_command():
    import subprocess
    result = subprocess.run([installed_executable("robo-reward"), "frobnicate"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "unknown command 'frobnicate'" in result.stderr


@pytest.mark.parametrize("executable", sorted(EXPECTED_NODES))
def test_executable_starts_and_stops_on_sigint(executable, ros_node, spawn):
    process = spawn([installed_executable(executable)])
    spin_until(ros_node, lambda: EXPECTED_NODES[executable] in ros_node.get_node_names(),
               what=f"node {EXPECTED_NODES[executable]} in the graph", processes=[process])
    code = process.interrupt()
    output = process.output()
    assert code == 0, output
    assert "Traceback" not in output, output
