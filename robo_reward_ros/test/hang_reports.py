# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A test that hangs fails alone and shows where every thread of its worker waited.

pytest-timeout (pytest.ini: timeout) ends a hung test's worker; under pytest-xdist the stacks it
prints are lost with the worker's captured output, and the controller only says "worker crashed".
So a worker arms faulthandler instead (it dumps from C, even while a thread holds the GIL in DDS
or a join) into a file the controller reads back into the crashed test's report.

A worker whose process is stopped (a debugger that attached and died) runs no timer at all: CI
once waited 70 minutes on one. So the controller also watches the dump files, which exist while
a test runs, and wakes or ends a worker whose test outlived its timeout.
"""
import faulthandler
import os
import re
import signal
import sys
import tempfile
import threading
import time

import pytest

from proc_stat import stat_fields

_OPEN = []  # the worker's dump file, kept open while a timer is armed
_HEADER = re.compile(r"^(?P<test>\S+) still running after (?P<timeout>[\d.]+) s \(worker pid (?P<pid>\d+)\)")
# Past its timeout, a worker has this long to dump and end itself (a test of this file shortens it).
_GRACE_SEC = float(os.environ.get("ROBO_REWARD_TEST_HANG_GRACE_SEC", "120"))


def _dump_path(worker: str) -> str:
    folder = os.path.join(tempfile.gettempdir(),
                          f"robo_reward_test_hangs_{os.environ['ROBO_REWARD_TEST_DOMAIN_BASE']}")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, f"{worker}.txt")


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item, settings):
    """Arm faulthandler on an xdist worker; elsewhere leave pytest-timeout to its own method."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or not settings.timeout or settings.timeout <= 0:
        return None
    handle = open(_dump_path(worker), "w")
    handle.write(f"{item.nodeid} still running after {settings.timeout:g} s (worker pid {os.getpid()}); "
                 "the worker's threads:\n")
    handle.flush()
    _OPEN.append(handle)
    faulthandler.dump_traceback_later(settings.timeout, exit=True, file=handle)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_cancel_timer(item):
    """Disarm the worker's timer after each test."""
    if not _OPEN:
        return None
    faulthandler.cancel_dump_traceback_later()
    while _OPEN:
        handle = _OPEN.pop()
        handle.close()
        os.remove(handle.name)
    return True


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    """Put the dump of a worker that timed out into the crashed test's report (controller side)."""
    worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)
    path = _dump_path(worker) if worker else None
    if path is None or not os.path.exists(path):
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        dump = handle.read()
    os.remove(path)
    if len(dump.splitlines()) > 1:  # more than the header: a dump, or the controller's word
        report.longrepr = f"{report.longrepr}\n{dump}"


def _process_state(pid: int) -> str:
    """Return the kernel's one-letter state of one of this process's children (T: stopped), else "gone"."""
    try:
        fields = stat_fields(f"/proc/{pid}/stat")
    except OSError:
        return "gone"
    return fields[0] if int(fields[1]) == os.getpid() else "gone"  # a pid reused by another process


def _end_overdue_worker(path: str, now: float, woken: dict) -> None:
    """Wake a worker whose test is past its timeout plus the grace (its own timer then fires); kill it later."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            header = _HEADER.match(handle.readline())
        started = os.stat(path).st_mtime
    except OSError:
        return  # the test ended meanwhile
    if header is None or now - started < float(header["timeout"]) + _GRACE_SEC:
        return
    pid = int(header["pid"])
    state = _process_state(pid)
    if state == "gone":
        return
    if pid not in woken:
        woken[pid] = now
        sys.stderr.write(f"\nhang_reports: {header['test']} has run {now - started:.0f} s, past its "
                         f"{header['timeout']} s timeout; worker pid {pid} is in state {state}: "
                         "sending SIGCONT so its own timer dumps its threads and ends it\n")
        os.kill(pid, signal.SIGCONT)
    elif now - woken[pid] > _GRACE_SEC:
        sys.stderr.write(f"\nhang_reports: worker pid {pid} (state {state}) did not end; killing it\n")
        with open(path, "a") as handle:
            handle.write(f"(the controller killed the worker: it stayed in state {state} after SIGCONT)\n")
        os.kill(pid, signal.SIGKILL)


def _watch_workers(folder: str, period: float) -> None:
    woken: dict = {}
    while True:
        time.sleep(period)
        now = time.time()
        for name in os.listdir(folder):
            if name.startswith("gw") and name.endswith(".txt"):
                try:
                    _end_overdue_worker(os.path.join(folder, name), now, woken)
                except ProcessLookupError:
                    pass


@pytest.hookimpl(tryfirst=True)  # before xdist starts the workers
def pytest_sessionstart(session):
    """Start the controller's watch over its workers (xdist only)."""
    if os.environ.get("PYTEST_XDIST_WORKER") or not getattr(session.config.option, "numprocesses", None):
        return
    folder = os.path.dirname(_dump_path("gw0"))
    for name in os.listdir(folder):  # an earlier session's (this one holds the domain slot now)
        if name.startswith("gw") and name.endswith(".txt"):
            os.remove(os.path.join(folder, name))
    threading.Thread(target=_watch_workers, args=(folder, min(15.0, _GRACE_SEC / 4)), name="hang_reports watch",
                     daemon=True).start()
