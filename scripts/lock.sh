#!/usr/bin/env bash
# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# Regenerates the lock files in requirements/lock/ from the hand-kept requirements/*.txt:
# every package, transitive ones included, pinned to one version per Python version and ROS 2
# distro. scripts/setup.sh installs from these and never resolves.
#   scripts/lock.sh                 all locks         scripts/lock.sh --upgrade   newest allowed
# Extra arguments go to `uv pip compile` (e.g. --upgrade-package rich).
#
# Target: Linux x86_64 (glibc 2.36, Debian 12), the project's CI and development machines.
# --find-links /opt/wheels: those machines carry a CPU build of torch 2.13.0 for Python 3.11
# there; the 3.11 locks pin it (torch==2.13.0+cpu, no CUDA libraries). Pythons without such a
# file get PyPI's build (CUDA libraries included). scripts/setup.sh passes the same folder when
# installing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
uv=${UV:-uv}
command -v "$uv" >/dev/null || { echo "lock: needs uv (pip install uv==0.13.8; or UV=path)" >&2; exit 1; }
export UV_PYTHON_DOWNLOADS=never
mkdir -p requirements/lock
common=(requirements/dev.txt requirements/model.txt requirements/tools.txt requirements/scale.txt)
for distro in kilted jazzy; do
  ros=requirements/ros-wheels.txt
  [ "$distro" = kilted ] || ros=requirements/ros-wheels-$distro.txt
  for version in 3.10 3.11 3.12; do
    out=requirements/lock/$distro-py$version.txt
    echo "lock: $out"
    "$uv" pip compile --quiet --python-version "$version" --python-platform x86_64-manylinux_2_36 \
      --find-links /opt/wheels --custom-compile-command scripts/lock.sh \
      "${common[@]}" "$ros" -o "$out" "$@"
  done
done
