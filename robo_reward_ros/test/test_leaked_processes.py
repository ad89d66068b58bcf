# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A test file that leaves a process running in its ROS domain fails, names it, and the process ends.

Runs a real pytest session with the plugin: one test starts a process in a session of its own
(as a tool starts its node) and returns without stopping it.
"""
import io
import os
import subprocess
import sys
import textwrap

from ros_fixtures import TEST_DIR

LEAKING_TESTS = textwrap.dedent("""
    import subprocess, sys

    def test_leaves_a_process_behind(tmp_path):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                 start_new_session=True)
        (tmp_path.parent.parent / "leaked.pid").write_text(str(child.pid))

    def test_stops_what_it_starts():
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        child.kill()
        child.wait()
""")


def test_a_process_left_running_fails_its_test_and_is_killed(tmp_path):
    (tmp_path / "test_leaking.py").write_text(LEAKING_TESTS)
    (tmp_path / "base").mkdir()
    env = dict(os.environ, PYTHONPATH=TEST_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""),
               ROBO_REWARD_TEST_DOMAIN_BASE="leak-test")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "leaked_processes",
                           "-p", "no:randomly", "-p", "no:cacheprovider", "--basetemp",
                           str(tmp_path / "base" / "inner"), "--rootdir", str(tmp_path),
                           "-c", os.devnull, str(tmp_path / "test_leaking.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    leaked = int((tmp_path / "base" / "leaked.pid").read_text())
    output = done.stdout + done.stderr + _fate(leaked, env)
    assert done.returncode == 1, output
    assert "2 passed, 1 error" in output, output
    assert ("the tests of test_leaking (the last: test_stops_what_it_starts) left 1 process(es) "
            "running") in output, output
    assert f"pid {leaked}: {sys.executable} -c import time; time.sleep(120)" in output, output
    assert not os.path.exists(f"/proc/{leaked}") or _state(leaked) == "Z", "the leaked process still runs"


def test_a_process_whose_exec_has_not_ended_is_still_found(monkeypatch):
    """Popen returns while its child's exec still runs (vfork), and until then its environment reads empty.

    A real child, whose first environment read is made to come back as it does mid-exec.
    """
    import leaked_processes
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    environ_path = f"/proc/{child.pid}/environ"
    emptied = []

    def opening(path, *args, **kwargs):
        if path == environ_path and not emptied:
            emptied.append(path)
            return io.BytesIO(b"")
        return open(path, *args, **kwargs)

    monkeypatch.setattr(leaked_processes, "open", opening, raising=False)
    try:
        found = leaked_processes._session_processes()
    finally:
        child.kill()
        child.wait()
    assert emptied == [environ_path]
    assert child.pid in found, "a child whose exec had not ended was missed"
    assert found[child.pid] == (os.getpid(), f"{sys.executable} -c import time; time.sleep(120)")


def _fate(pid: int, env: dict) -> str:
    """Say what became of the leaked process, for a failure's message (CI once saw no leak reported)."""
    state = _state(pid)
    if state in ("gone", "Z"):
        return f"\n(the leaked process, pid {pid}, is {'gone' if state == 'gone' else 'dead, not reaped yet'})"
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read().split(b"\0")
        marks = {name: f"{name}={env[name]}".encode() in environ
                 for name in ("ROS_DOMAIN_ID", "ROBO_REWARD_TEST_DOMAIN_BASE")}
    except OSError as exc:
        marks = {"environ": repr(exc)}
    return f"\n(the leaked process, pid {pid}: state {state}, its environment holds {marks})"


def _state(pid: int) -> str:
    from proc_stat import stat_fields
    try:
        return stat_fields(f"/proc/{pid}/stat")[0]
    except OSError:
        return "gone"
