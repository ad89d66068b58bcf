# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A shared reward server (Ray Serve) for robots that have no GPU of their own (models/remote/ is its wire format)."""
