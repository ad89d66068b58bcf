"""The reward backends (Robometer, RoboReward, TOPReward) behind the RewardModel interface."""
