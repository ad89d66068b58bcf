# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The code must run on Python 3.10 (Humble, Jetson) through 3.12.

Every file of the package, its tests, launch file and benchmarks must at least compile under the
oldest and newest.
"""
import glob
import os
import subprocess

import pytest

from ros_fixtures import PACKAGE_ROOT

REPO_ROOT = os.path.dirname(PACKAGE_ROOT)


def _interpreter(version: str):
    """Return the interpreter scripts/setup.sh would take for this version (scripts/find_python.sh)."""
    finder = os.path.join(REPO_ROOT, "scripts", "find_python.sh")
    found = subprocess.run(["bash", "-c", f'. "{finder}" && find_python python{version}'],
                           capture_output=True, text=True)
    if found.returncode != 0:
        return None
    # The finder takes any 3.10-3.12 by that name; this check needs exactly the version asked.
    python = found.stdout.strip()
    probe = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"],
                           capture_output=True, text=True)
    return python if probe.stdout.strip() == str(tuple(map(int, version.split(".")))) else None


def _sources():
    files = glob.glob(os.path.join(PACKAGE_ROOT, "**", "*.py"), recursive=True)
    files += glob.glob(os.path.join(REPO_ROOT, "bench", "**", "*.py"), recursive=True)
    return sorted(files)


@pytest.mark.parametrize("version", ["3.10", "3.12"])
def test_sources_compile(version, tmp_path):
    python = _interpreter(version)
    # Never a skip: a machine without the interpreter must not pass for one that checked.
    assert python is not None, (f"no Python {version} interpreter found (python{version} on PATH, "
                                f"or in pyenv's versions/{version}.*): install it to run this check")
    script = ("import py_compile, sys\n"
              "for path in sys.argv[1:]:\n"
              "    py_compile.compile(path, cfile=sys.argv[0] + '.pyc', doraise=True)\n")
    check = tmp_path / "check.py"
    check.write_text(script)
    result = subprocess.run([python, str(check)] + _sources(), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
