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
EXPECTED_NODES = {"reward_node": "reward_node", "synthetic_camera": "synthetic_camera"}


def test_every_console_script_is_covered():
    assert set(console_scripts()) == set(EXPECTED_NODES)


@pytest.mark.parametrize("executable", sorted(EXPECTED_NODES))
def test_executable_starts_and_stops_on_sigint(executable, ros_node, spawn):
    process = spawn([installed_executable(executable)])
    spin_until(ros_node, lambda: EXPECTED_NODES[executable] in ros_node.get_node_names(),
               what=f"node {EXPECTED_NODES[executable]} in the graph", processes=[process])
    code = process.interrupt()
    output = process.output()
    assert code == 0, output
    assert "Traceback" not in output, output
