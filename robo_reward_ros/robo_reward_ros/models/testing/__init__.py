# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Tiny offline checkpoints in the published layouts, for tests and the demo."""
