# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A stopped test worker is woken and ended by the controller, and its test fails with the stacks.

CI waited out its 90 minutes twice on a worker that ran no timer of its own (2026-12-05 and 07);
this runs a real pytest-xdist session whose test stops its own process, as a debugger that attached
and died leaves one.
"""
import os
import subprocess
import sys
import textwrap

from ros_fixtures import TEST_DIR

STOPPING_TESTS = textwrap.dedent("""
    import os, signal, time

    def test_stops_its_own_worker():
        os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(60)  # woken, it still hangs: the dump must find it here

    def test_after_it_on_a_new_worker():
        assert True
""")


def test_a_stopped_worker_is_woken_its_test_fails_with_stacks_and_the_session_goes_on(tmp_path):
    (tmp_path / "test_stopping.py").write_text(STOPPING_TESTS)
    env = dict(os.environ, PYTHONPATH=TEST_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""),
               ROBO_REWARD_TEST_DOMAIN_BASE="hang-test", TMPDIR=str(tmp_path),
               ROBO_REWARD_TEST_HANG_GRACE_SEC="3")
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "hang_reports", "-p", "no:randomly",
                           "-n", "1", "--timeout", "2", "--rootdir", str(tmp_path), "-c", os.devnull,
                           str(tmp_path / "test_stopping.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "1 failed, 1 passed" in output, output
    assert "worker pid" in output and "is in state T" in output, output
    assert "test_stops_its_own_worker still running after 2 s" in output, output
    assert "in test_stops_its_own_worker" in output, output  # the test's own frame in the dump
