# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A process that renders Meta-World and then loads a model survives (Mesa's LLVM beside Triton's)."""
import importlib.util
import os
import subprocess
import sys

import pytest

RENDER_THEN_LOAD = """
from robo_reward_ros.simulation.metaworld_episodes import CornerCamera, make_env
env, _ = make_env("drawer-close-v3", 0)
camera = CornerCamera(env, 64)
assert camera.render().shape == (64, 64, 3)
camera.close()
env.close()
import torch._dynamo  # what transformers imports when it loads a model; it loads Triton
print("loaded after rendering")
"""


@pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                    reason="no Triton here (CPU-only torch): nothing to load after Mesa")
def test_a_model_loads_after_software_rendering_in_the_same_process():
    """Python 3.10 with CUDA torch died here: Triton loaded after an EGL context segfaulted (2026-12-07)."""
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    done = subprocess.run([sys.executable, "-c", RENDER_THEN_LOAD], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "MUJOCO_GL": "egl"})
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert "loaded after rendering" in done.stdout
