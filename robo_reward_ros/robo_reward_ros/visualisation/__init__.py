# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What a person looks at: replay plots, Foxglove layouts and stills of them (matplotlib)."""
