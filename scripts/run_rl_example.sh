#!/usr/bin/env bash
# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# An agent that learns Meta-World drawer-close from the reward node's rewards, in three arms
# (environment reward, node reward, node reward with the operator loop and fine-tuning); prints
# the table and writes the learning curves. About an hour on 2 CPU cores with the defaults;
# --model drawer (the drawer-close model that makes the agent learn, docs/rl-example.md) trains
# that model first, about 35 min more, once.
# Extra arguments go to the example (see: scripts/run_rl_example.sh --help).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
. "$root/scripts/env.sh"
exec python "$root/examples/rl_from_node_rewards.py" "$@"
