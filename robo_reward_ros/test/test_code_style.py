# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Style checks as ament packages run them (ament_flake8, ament_pep257).

They use the pinned linters of requirements/dev.txt and the rules in setup.cfg, over the package,
its launch file, its tests and the benchmarks.
"""
import os
import subprocess
import sys

from ros_fixtures import PACKAGE_ROOT

CONFIG = os.path.join(PACKAGE_ROOT, "setup.cfg")
BENCH = os.path.join(os.path.dirname(PACKAGE_ROOT), "bench")
SOURCES = [os.path.join(PACKAGE_ROOT, name) for name in ("robo_reward_ros", "launch", "test", "setup.py")]


def _lint(tool, *args):
    result = subprocess.run([sys.executable, "-m", tool, "--config", CONFIG, *args, *SOURCES, BENCH],
                            cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=600)
    return result.returncode, (result.stdout + result.stderr).strip()


def test_flake8():
    code, report = _lint("flake8")
    assert code == 0 and not report, f"flake8 found:\n{report}"


def test_pep257():
    code, report = _lint("pydocstyle")
    assert code == 0 and not report, f"pydocstyle found:\n{report}"
