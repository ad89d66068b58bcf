#!/usr/bin/env bash
# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# The reward node on an embedded default: Meta-World episodes and real robot clips played
# to the node as a camera, a tiny offline model, no downloads.
# Extra arguments go to the demo (see: scripts/run_demo.sh --help).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
. "$root/scripts/env.sh"
exec python -m robo_reward_ros.demo "$@"
