# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The vision tower through ONNX Runtime: export and inference."""
