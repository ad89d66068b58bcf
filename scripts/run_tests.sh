#!/usr/bin/env bash
# The whole test suite on a fresh machine: set up the venv and colcon build, then pytest.
# Extra arguments go to pytest (e.g. scripts/run_tests.sh -k messages -x).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
. "$root/scripts/env.sh"
cd "$root"
exec python -m pytest robo_reward_ros/test "$@"
