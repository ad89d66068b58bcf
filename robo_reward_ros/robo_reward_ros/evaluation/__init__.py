# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Metrics and reports: how good a reward model's judgements were, from replays (``robo-reward eval``)."""
