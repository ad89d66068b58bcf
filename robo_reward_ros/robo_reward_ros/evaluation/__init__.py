"""Metrics and reports: how good a reward model's judgements were, from replays (``robo-reward eval``)."""
