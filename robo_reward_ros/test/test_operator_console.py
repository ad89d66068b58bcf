# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The operator console in a real terminal (tmux) against a real reward node in confirmation mode.

What the pane shows is what a person sees: the model's pending success, the veto's and the
confirmation's answers, a takeover, reset-done, a node that goes away and comes back, and a
clean quit. The node's own state is checked through a RewardClient of the test, too.
"""
import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest
from robo_reward_msgs.msg import DecidedBy, TaskState

from robo_reward_ros.client import RewardClient
from ros_fixtures import PACKAGE_ROOT, SCRIPTED_ENV, reward_node_argv, spin_until
from test_reward_client import Cameras

NODE_PARAMS = ("inference.rate_hz:=20.0", "success.k:=2", "success.n:=3", "cameras.stale_after_sec:=30.0",
               "failure.stall_window_sec:=1.0", "failure.low_progress_floor:=0.0", "operator.confirm_decisions:=true",
               "operator.confirm_timeout_sec:=600.0", "operator.start_after_reset_done:=true")
# What the console's process needs of the test's environment: the ROS domain and discovery this
# test session uses, its log folder, the venv and the package's source.
PASSED_PREFIXES = ("ROS_", "RMW_", "FASTRTPS_", "FASTDDS_", "CYCLONEDDS_", "AMENT_", "RCUTILS_")
PASSED_NAMES = ("PATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "HOME", "LANG", "LC_ALL")
PANE_TIMEOUT_SEC = 30.0


class ConsolePane:
    """The console running in a detached tmux session of a server of its own."""

    def __init__(self, tmp_path, ros_node, processes) -> None:
        self.socket = f"rr-console-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.ros_node, self.processes = ros_node, processes
        self.exit_path, self.err_path = tmp_path / "console.exit", tmp_path / "console.err"
        env = {k: v for k, v in os.environ.items() if k.startswith(PASSED_PREFIXES) or k in PASSED_NAMES}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_ROOT, os.environ.get("PYTHONPATH")]))
        console = ["env", *(f"{k}={v}" for k, v in sorted(env.items())), sys.executable, "-m",
                   "robo_reward_ros.console.operator_console", "--source", "alice", "--timeout", "2"]
        command = (f"{shlex.join(console)} 2>{shlex.quote(str(self.err_path))}; "
                   f"echo $? > {shlex.quote(str(self.exit_path))}")
        self._tmux("new-session", "-d", "-s", "console", "-x", "120", "-y", "40", command)

    def _tmux(self, *args, check=True):
        environment = dict(os.environ, TERM=os.environ.get("TERM") or "xterm-256color")
        return subprocess.run(["tmux", "-L", self.socket, "-f", os.devnull, *args], capture_output=True,
                              text=True, timeout=10, check=check, env=environment)

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "console", check=False).stdout

    def press(self, key: str) -> None:
        self._tmux("send-keys", "-t", "console", key)

    def wait_for(self, *needles: str, while_waiting=lambda: None) -> str:
        """Return the pane once it shows every needle; ``while_waiting`` runs between looks."""
        deadline = time.monotonic() + PANE_TIMEOUT_SEC
        while True:
            text = self.text()
            if all(needle in text for needle in needles):
                return text
            if time.monotonic() > deadline or self.exit_path.exists():
                errors = self.err_path.read_text() if self.err_path.exists() else ""
                nodes = "".join(f"\n--- {p.argv[0]} ---\n{p.output()[-3000:]}" for p in self.processes)
                pytest.fail(f"the console did not show {needles}:\n{text}\n--- console stderr ---\n"
                            f"{errors}{nodes}")
            while_waiting()
            self.ros_node.test_executor.spin_once(timeout_sec=0.05)

    def exit_code(self) -> str:
        spin_until(self.ros_node, self.exit_path.exists, timeout=15.0, what="the console's exit")
        return self.exit_path.read_text().strip()

    def session_alive(self) -> bool:
        return self._tmux("has-session", "-t", "console", check=False).returncode == 0

    def close(self) -> None:
        self._tmux("kill-server", check=False)
        # A server that ended with its last session leaves its socket file behind.
        folder = os.path.join(os.environ.get("TMUX_TMPDIR") or "/tmp", f"tmux-{os.getuid()}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(folder, self.socket))


@pytest.fixture
def client():
    reward_client = RewardClient()
    yield reward_client
    reward_client.close()


@pytest.fixture
def console_factory(tmp_path, ros_node):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed: the console test runs the console in a tmux terminal")
    panes = []

    def start(processes):
        panes.append(ConsolePane(tmp_path, ros_node, processes))
        return panes[-1]
    yield start
    for pane in panes:
        pane.close()


def test_console_answers_a_pending_success_takes_over_and_follows_a_restart(
        ros_node, spawn, client, console_factory, tmp_path):
    log_dir = tmp_path / "episodes"
    log_dir.mkdir(mode=0o700)
    processes = [spawn(reward_node_argv(*NODE_PARAMS, log_dir=str(log_dir)), env=SCRIPTED_ENV)]
    console = console_factory(processes)
    assert client.wait_for_node(30.0), processes[0].output()
    cameras = Cameras(ros_node, processes)
    episode = client.set_task(["open the drawer"])
    cameras.first_step(client, episode)
    # Steps are not latched: the console's own subscription may match after the test's client saw
    # its first steps, so frames go on until the console shows one.
    console.wait_for("/reward_node  running", f"episode   {episode}", "stage     1/1  open the drawer",
                     "status    RUNNING", "progress  [", while_waiting=lambda: cameras.publish(progress=0.3))

    def publish_until_pending():
        spin_until(ros_node, lambda: client.task_state().status == TaskState.STATUS_PENDING
                   or cameras.publish(progress=0.9, success=0.95) is None, what="a pending success",
                   processes=processes)
        return console.wait_for("SUCCESS PENDING, decided by model: waits for you: s confirm success",
                                "success p 0.95", while_waiting=lambda: cameras.publish(progress=0.9, success=0.95))

    # The model's success waits; the veto's answer comes back and the stage runs on.
    pane = publish_until_pending()
    assert "status    PENDING  decided by model" in pane and "success pending confirmation" in pane
    console.press("v")
    pane = console.wait_for("[v] veto: applied: vetoed the model's pending success; stage 1 goes on",
                            "status    RUNNING", "alice: verdict not_yet (veto) applied")
    assert "SUCCESS PENDING" not in pane
    # The test's client hears the state on its own subscription, maybe after the console did.
    spin_until(ros_node, lambda: client.task_state().status == TaskState.STATUS_RUNNING,
               what="the running state after the veto", processes=processes)

    # Pending again: the operator confirms, and the episode ends decided by the operator.
    publish_until_pending()
    console.press("s")
    console.wait_for("[s] success: applied: confirmed the model's pending success",
                     "status    SUCCEEDED  decided by operator alice")
    spin_until(ros_node, lambda: any(s.terminated for s in client.steps(episode)),
               what="the terminal step", processes=processes)
    state = client.task_state()
    assert state.status == TaskState.STATUS_SUCCEEDED and state.episode_id == episode
    assert (state.decided_by.source, state.decided_by.name) == (DecidedBy.OPERATOR, "alice")
    (end,) = [s for s in client.steps(episode) if s.terminated]
    assert (end.decided_by.source, end.decided_by.name) == (DecidedBy.OPERATOR, "alice")

    # Reset done starts the next episode; a takeover starts and ends on two presses of t.
    console.press("r")
    pane = console.wait_for("[r] reset done: applied: scene reset: episode")
    following = pane.split("scene reset: episode ", 1)[1].split()[0]
    assert following != episode
    spin_until(ros_node, lambda: client.task_state().episode_id == following
               and client.task_state().status == TaskState.STATUS_RUNNING
               or cameras.publish(progress=0.3) is None, what="the next episode running", processes=processes)
    console.wait_for(f"episode   {following}", "status    RUNNING")
    console.press("t")
    console.wait_for("[t] takeover start: applied: takeover 1 started", "ACTIVE: a person is in control")
    spin_until(ros_node, lambda: client.task_state().intervention_active, what="the takeover in the state",
               processes=processes)
    console.press("t")
    pane = console.wait_for("[t] takeover end: applied: takeover ended after", "takeover  off")
    assert "ACTIVE: a person is in control" not in pane

    # A standstill after the takeover is a stall warning: shown, then dismissed; then a failure verdict.
    spin_until(ros_node, lambda: client.failures(following) or cameras.publish(progress=0.4) is None,
               what="a stall warning", processes=processes)
    console.wait_for("alerts (newest last)\n  stall (warning) stage 1: ")
    console.press("d")
    console.wait_for("[d] dismiss alert: applied: stall alert at", "alice: dismiss_alert applied")
    console.press("f")
    console.wait_for(f"[f] failure: applied: episode {following} failed, decided by alice",
                     "status    FAILED  decided by operator alice")
    spin_until(ros_node, lambda: client.task_state().status == TaskState.STATUS_FAILED,
               what="the failed state", processes=processes)

    # The node goes away: the console says so, and a key answers with an error, not a hang.
    assert processes[0].interrupt() == 0
    console.wait_for("NODE GONE since")
    console.press("s")
    console.wait_for("[s] success: error: no reward node answers")
    # It comes back (a new process): the console shows it and its new episode.
    processes.append(spawn(reward_node_argv(*NODE_PARAMS, log_dir=str(log_dir)), env=SCRIPTED_ENV))
    console.wait_for("/reward_node  running")
    assert client.wait_for_node(30.0), processes[1].output()
    restarted = client.set_task(["close the drawer"])
    pane = console.wait_for(f"episode   {restarted}", "stage     1/1  close the drawer")
    assert "NODE GONE" not in pane
    console.press("v")  # the restarted node answers the console's calls too
    console.wait_for("[v] veto: refused: no episode has run yet")  # its episode waits for a frame

    console.press("q")
    assert console.exit_code() == "0"
    assert not console.session_alive()
