"""Tiny offline checkpoints in the published layouts, for tests and the demo."""
