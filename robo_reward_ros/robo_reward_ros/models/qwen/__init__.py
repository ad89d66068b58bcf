"""Qwen3-VL plumbing shared by the backends: prompts, pixels, vision blocks, loading."""
