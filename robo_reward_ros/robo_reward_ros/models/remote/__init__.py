# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward server's wire format and API key: spoken by the remote backend and by the server (serving/) alike."""
