# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A process a test file started and left running fails its last test, and is ended before the next file.

Every process a test starts inherits its worker's ROS domain. One left behind (a node started in
a session of its own by a tool the test killed) goes on publishing on that domain: a later test's
listener then reads its /diagnostics as if they were its own node's. Written after CI read a camera
"time_since_last_frame_sec" of "n/a" from some other node once; no leak was found behind it yet.
"""
import os
import signal
import time
from typing import Dict, List, Tuple

import pytest

from proc_stat import stat_fields

# A process on its way out is no leak: a killed one leaves the process table when its parent
# reaps it, and a Ray worker exits on its own once its raylet is gone. Under two CPU burners one
# of test_rank's Ray workers was still there 5 s after its runtime shut down (1 of 10 repetitions,
# 2026-12-07). The wait ends as soon as nothing is left, so only a real leak pays it.
_EXIT_GRACE_SEC = 30.0
# subprocess.Popen returns once its child's exec has begun (vfork), not once it has ended, and
# until it ends the child's environment reads empty: a scan just after a test started a process
# missed it in 6 and 2 of 300 tries under three CPU burners with the page cache dropped every
# 20 ms (2026-12-07; 0 of 1500 with the burners alone). One scan waits this long in all for such
# environments to fill; a process exec'd with none at all costs it once.
_EXEC_WAIT_SEC = 1.0
_PF_KTHREAD = 0x00200000  # /proc/PID/stat flags: a kernel thread, whose environment is always empty


def _session_processes() -> Dict[int, Tuple[int, str]]:
    """Return pid -> (parent pid, command line) of the live processes in this worker's ROS domain.

    This worker itself aside.
    """
    domain = f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '')}".encode()
    base = f"ROBO_REWARD_TEST_DOMAIN_BASE={os.environ.get('ROBO_REWARD_TEST_DOMAIN_BASE', '')}".encode()
    found = {}
    exec_deadline = time.monotonic() + _EXEC_WAIT_SEC
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = _environment(int(entry), exec_deadline)
            if domain not in environ or base not in environ:
                continue
            state, parent = stat_fields(f"/proc/{entry}/stat")[:2]
            if state == "Z":
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
            found[int(entry)] = (int(parent), command)
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def _environment(pid: int, exec_deadline: float) -> List[bytes]:
    """Return a process's environment, read again while an exec in progress leaves it empty; OSError if gone."""
    while True:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
        if environ or time.monotonic() > exec_deadline or int(stat_fields(f"/proc/{pid}/stat")[6]) & _PF_KTHREAD:
            return environ.split(b"\0")
        time.sleep(0.001)


def _left_running(before: Dict[int, Tuple[int, str]]) -> Dict[int, str]:
    """Return the processes started since ``before`` that still run, bar those a process from then started.

    A process that was already running when the test began (a module's Ray runtime) may grow
    its own pool of workers during a test: those are its to end.
    """
    deadline = time.monotonic() + _EXIT_GRACE_SEC
    while True:
        left = {pid: command for pid, (parent, command) in _session_processes().items()
                if pid not in before and parent not in before}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Note the processes already running when a test file's first test body starts."""
    if os.path.isdir("/proc") and item.module not in _BEFORE:
        _BEFORE[item.module] = _session_processes()
    return (yield)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After a file's last test and its module's fixtures are torn down, fail it for what still runs.

    Checked per file, not per test: a test may restart a server that a module fixture owns and
    stops at the module's end (test_reward_server's killed server).
    """
    result = yield
    if nextitem is not None and nextitem.module is item.module:
        return result
    before = _BEFORE.pop(item.module, None)
    if before is None:
        return result
    left = _left_running(before)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if left:
        lines: List[str] = [f"  pid {pid}: {cmd[:300]}" for pid, cmd in sorted(left.items())]
        pytest.fail(f"the tests of {item.module.__name__} (the last: {item.name}) left {len(left)} "
                    "process(es) running in their ROS domain (now killed):\n" + "\n".join(lines),
                    pytrace=False)
    return result


_BEFORE: Dict[object, Dict[int, Tuple[int, str]]] = {}  # test module -> its processes at the start
