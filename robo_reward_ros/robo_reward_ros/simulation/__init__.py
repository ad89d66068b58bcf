# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episodes made here with known outcomes: Meta-World renders, a synthetic scene, videos, demo assets."""
