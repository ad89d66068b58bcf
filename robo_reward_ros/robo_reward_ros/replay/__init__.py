# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Recorded episodes through the node's own reward pipeline, offline: in one process or on Ray."""
