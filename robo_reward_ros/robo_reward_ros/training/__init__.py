# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Fine-tuning a Robometer-layout reward model on recorded episodes (``robo-reward finetune``)."""
