# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The code must run on Python 3.10 (Humble, Jetson) through 3.12.

Every file of the package, its tests, launch file, benchmarks and examples must compile under the
oldest and newest, and use nothing from the standard library or the language that 3.10 lacks
(vermin). With that, the py3.10 leg runs only the tests whose outcome can depend on the
interpreter's libraries (docs/development.md, "What each leg runs").
"""
import glob
import os
import subprocess
import sys

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
    files += glob.glob(os.path.join(REPO_ROOT, "examples", "**", "*.py"), recursive=True)
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


def _vermin(paths):
    """Run vermin, the venv's, for a 3.10 floor: exit status non-zero when a file needs more."""
    vermin = os.path.join(os.path.dirname(sys.executable), "vermin")
    return subprocess.run([vermin, "--target=3.10-", "--violations", "--no-tips", "--processes=1"]
                          + list(paths), capture_output=True, text=True)


def test_sources_need_nothing_newer_than_python_3_10():
    # Compiling finds new syntax only; datetime.UTC, tomllib, typing.Self or enum.StrEnum compile
    # under 3.10 and fail when the line runs, which may be a path no 3.10 test takes.
    result = _vermin(_sources())
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_version_check_sees_what_3_10_lacks(tmp_path):
    newer = tmp_path / "newer.py"
    newer.write_text("import tomllib\nfrom datetime import UTC\n")
    result = _vermin([str(newer)])
    assert result.returncode != 0
    assert "tomllib" in result.stdout and "datetime.UTC" in result.stdout, result.stdout
