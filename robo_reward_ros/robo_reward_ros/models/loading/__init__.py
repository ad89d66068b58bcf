# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""From a model id or directory to a backend: layouts, precision, presets, registry."""
