# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The operator console: a terminal view of one reward node, and single keys to correct it.

It talks to the node only through ``RewardClient``; prompt_toolkit is imported here alone (a
tool's requirement, requirements/tools.txt), so the node never needs it.
"""
