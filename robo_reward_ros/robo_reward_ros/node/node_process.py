# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The installed node as a child process: found, given its parameters, started and stopped.

One place for what the demo, the live replay, the soaks and the tests do to run the real
executable (not an in-process node): a robot runs it that way too.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import Any, Dict, List, Mapping, Optional

from robo_reward_ros.settings.parameter_table import SPECS


def installed_prefix() -> str:
    """Install prefix of the built robo_reward_ros (the colcon install base, found through the ament index)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    try:
        return get_package_prefix("robo_reward_ros")
    except (PackageNotFoundError, KeyError) as exc:
        raise FileNotFoundError(f"robo_reward_ros is not installed ({exc}): build the workspace "
                                "first (scripts/setup.sh) and source scripts/env.sh") from None


def installed_executable(name: str) -> str:
    """Path of an executable this package installs (lib/robo_reward_ros/NAME)."""
    path = os.path.join(installed_prefix(), "lib", "robo_reward_ros", name)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{path} is missing: build the workspace first (scripts/setup.sh)")
    return path


def ros_value(value: Any) -> str:
    """Format a parameter value as ``-p name:=VALUE`` text (YAML): strings quoted, lists in flow style."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, list, tuple)):
        return json.dumps(list(value) if isinstance(value, tuple) else value)
    return repr(value)


def node_argv(executable: str, values: Mapping[str, Any]) -> List[str]:
    """Build the reward node's command line for a full set of parameter values (defaults left out, model kept)."""
    argv = [executable, "--ros-args"]
    for spec in SPECS:
        value = values[spec.name]
        if value != spec.default or spec.name.startswith("model."):
            argv += ["-p", f"{spec.name}:={ros_value(value)}"]
    return argv


def start_process(argv: List[str], log_path: str, env: Optional[Dict[str, str]] = None,
                  own_group: bool = True) -> subprocess.Popen:
    """Start ``argv`` with its output in ``log_path``.

    ``own_group``: in its own process group, so a Ctrl-C in the parent's terminal reaches it only
    through ``stop_process`` (the parent decides the order of shutdown) and a group kill also
    stops what it started.
    """
    with open(log_path, "wb") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=own_group,
                                env=None if env is None else {**os.environ, **env})


def stop_process(process: subprocess.Popen, timeout: float = 30.0) -> int:
    """SIGINT (as Ctrl-C or ``ros2 launch`` sends it), then SIGKILL after ``timeout``; the exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
