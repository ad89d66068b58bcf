# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A test that hangs fails alone and shows where every thread of its worker waited.

pytest-timeout (pytest.ini: timeout) ends a hung test's worker; under pytest-xdist the stacks it
prints are lost with the worker's captured output, and the controller only says "worker crashed".
So a worker arms faulthandler instead (it dumps from C, even while a thread holds the GIL in DDS
or a join) into a file the controller reads back into the crashed test's report.
"""
import faulthandler
import os
import tempfile

import pytest

_OPEN = []  # the worker's dump file, kept open while a timer is armed


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
    handle.write(f"{item.nodeid} still running after {settings.timeout:g} s; the worker's threads:\n")
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
    if "Thread 0x" in dump or "Current thread" in dump:
        report.longrepr = f"{report.longrepr}\n{dump}"
