# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Qwen3-VL plumbing shared by the backends: prompts, pixels, vision blocks, loading."""
