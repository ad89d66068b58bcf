# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Fixtures for tests that use real rclpy.

A context per test, processes for the other side, and waiting on the ROS graph or on data instead of sleeping.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import Callable, Iterator, List, Optional

import pytest

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(TEST_DIR)
# Generous: CI machines are small and shared; a healthy run waits far less.
DISCOVERY_TIMEOUT_SEC = 30.0


def installed_prefix() -> str:
    """Return the install prefix of the built package (node/node_process.py)."""
    from robo_reward_ros.node.node_process import installed_prefix as find
    try:
        return find()
    except FileNotFoundError as exc:
        pytest.fail(f"{exc} (scripts/env.sh sets AMENT_PREFIX_PATH)")


def installed_executable(name: str) -> str:
    """Return the package's own executable, as the node's users start it (node/node_process.py)."""
    from robo_reward_ros.node.node_process import installed_executable as find
    try:
        return find(name)
    except FileNotFoundError as exc:
        pytest.fail(f"{exc} (scripts/env.sh sets AMENT_PREFIX_PATH)")


class RosProcess:
    """A child process whose output goes to a file, so a failing test can show it."""

    def __init__(self, argv: List[str], log_path: str, env: Optional[dict] = None) -> None:
        from robo_reward_ros.node.node_process import start_process
        self.argv = argv
        self.log_path = log_path
        # Own process group, so kill() also stops what it started (a launch file's nodes).
        self.popen = start_process(argv, log_path, env)

    def output(self) -> str:
        with open(self.log_path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")

    def interrupt(self, timeout: float = 15.0) -> int:
        """SIGINT, as Ctrl-C or ros2 launch would send; returns the exit code."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
        return self.popen.wait(timeout=timeout)

    def kill(self) -> None:
        """SIGKILL to the process group, only while its leader is not reaped yet.

        Once the leader is reaped and its group empty, the kernel hands its pid out again
        (pid_max is 32768 on these machines): it may lead another test's process group by now,
        and a group kill would end that stranger. What a reaped leader left running in its group
        the leaked-process check (leaked_processes.py) reports.
        """
        if self.popen.returncode is None:  # not reaped: its pid, and so its group id, still ours
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.popen.wait()


@pytest.fixture
def spawn(tmp_path):
    """Start a process (installed executable or python script); all are stopped at teardown."""
    started: List[RosProcess] = []

    def _spawn(argv: List[str], name: Optional[str] = None,
               env: Optional[dict] = None) -> RosProcess:
        log = tmp_path / f"{name or os.path.basename(argv[0])}-{len(started)}.log"
        process = RosProcess(argv, str(log), env)
        started.append(process)
        return process

    yield _spawn
    for process in started:
        process.kill()


@contextlib.contextmanager
def participant(name: str) -> Iterator:
    """Yield an rclpy node in a context of its own, so a DDS participant of its own.

    Tests that kill and restart a node talk to the restarted one through a participant created
    after the restart: Fast DDS 3.2 (Kilted's wheels) keeps a killed peer's shared-memory port
    cached in every participant that outlived it, and a restarted peer that gets the same
    participant id can stay deaf to those for good (docs/troubleshooting.md,
    scripts/fastdds_respawn_repro.py).
    """
    import rclpy
    import rclpy.executors
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(name, context=context)
    executor = rclpy.executors.SingleThreadedExecutor(context=context)
    executor.add_node(node)
    node.test_executor = executor
    try:
        yield node
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)


@pytest.fixture
def ros_node(request):
    """Yield an rclpy node in its own context, shut down after the test."""
    with participant(f"test_{request.node.name[:40].replace('[', '_').replace(']', '_').replace('-', '_')}") as node:
        yield node


def spin_until(node, condition: Callable[[], bool], timeout: float = DISCOVERY_TIMEOUT_SEC,
               what: str = "condition", processes: Optional[List[RosProcess]] = None,
               lacking: Optional[Callable[[], str]] = None) -> None:
    """Spin the node's executor until the condition holds; fail with context on timeout.

    ``lacking`` says, at the timeout, which part of the condition is still missing.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        for process in processes or []:
            if process.popen.poll() is not None:
                pytest.fail(f"{process.argv[0]} exited with {process.popen.returncode} while "
                            f"waiting for {what}:\n{process.output()}")
        node.test_executor.spin_once(timeout_sec=0.05)
    details = "".join(f"\n--- {p.argv[0]} ---\n{p.output()}" for p in processes or [])
    from dds_evidence import stall_report
    evidence = stall_report(node, [p.popen.pid for p in processes or []])
    missing = f" ({lacking()})" if lacking else ""
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}{missing}{details}\n{evidence}")


def python_script(name: str) -> List[str]:
    return [sys.executable, os.path.join(TEST_DIR, name)]


# The reward node with the pixel-scripted test backend (test/scripted_backend.py): what it
# "predicts" is painted into the camera frames, so a test controls the model's outputs.
# name_check_sec 0: a scripted model loads at once, and the name check's discovery wait would
# add 3 s to every start (test_reward_node_faults checks it with the default).
SCRIPTED_MODEL_ARGS = ["-p", 'model.preset:=""', "-p", "model.backend:=pixel_scripted",
                       "-p", "model.plugin_modules:=scripted_backend", "-p", "name_check_sec:=0.0"]
SCRIPTED_ENV = {"PYTHONPATH": TEST_DIR + os.pathsep + os.environ.get("PYTHONPATH", "")}


def reward_node_argv(*params: str, log_dir: Optional[str] = None) -> List[str]:
    """Build the command line of the installed reward_node with the scripted backend and the given ``name:=value``s."""
    argv = [installed_executable("reward_node"), "--ros-args"] + SCRIPTED_MODEL_ARGS
    if log_dir is not None:
        argv += ["-p", f"episode_log.directory:={log_dir}"]
    for param in params:
        argv += ["-p", param]
    return argv
