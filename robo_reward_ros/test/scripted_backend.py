# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A reward backend whose outputs the test controls through the camera images themselves.

Each frame's progress is its mean red value / 255 and its success probability its mean green
value / 255, so a test (or a camera publisher in another process) decides what the "model"
says by the colour it paints, and everything downstream (window, monitor, node, messages) runs
unchanged. Faults are painted too: a newest frame with blue >= 250 makes the step raise (as a
CUDA out-of-memory would), blue in [200, 250) makes it return NaN, and any frame of the window
with blue in [150, 200) makes the step raise (a frame the model cannot process, wherever it is
in the window). PIXEL_SCRIPTED_DELAY_SEC in the environment makes every step take that long (a
slow model; PIXEL_SCRIPTED_STEP_STARTED names a file that gets the process id when such a
step begins); PIXEL_SCRIPTED_LOAD_GATE makes loading wait until that file exists (a slow load). Registered as
backend ``pixel_scripted`` when this module is imported, which is what the node does with
``model.plugin_modules: [scripted_backend]``; ``pixel_scripted_verifier`` reads its success from
blue (under 150) instead, a second opinion painted apart from the first.
"""
import os
import time
from typing import Sequence

import numpy as np

from robo_reward_ros.models.loading.backend_registry import register_backend
from robo_reward_ros.models.reward_model import Capabilities, Frame, ModelOutput, RewardModel


FAIL_BLUE, NAN_BLUE, POISON_BLUE = 255, 220, 170


def painted(progress: float, success: float, size=(24, 32), blue: int = 0) -> np.ndarray:
    """Paint an RGB frame that the scripted backend reads as (progress, success[, fault])."""
    image = np.zeros(size + (3,), dtype=np.uint8)
    image[..., 0] = int(round(progress * 255))
    image[..., 1] = int(round(success * 255))
    image[..., 2] = blue
    return image


class PixelScriptedBackend(RewardModel):
    name = "pixel_scripted"
    capabilities = Capabilities(progress=True, success=True, preference=True)

    def __init__(self, model: str = "", precision: str = "fp32", device: str = "cpu", **options):
        gate = os.environ.get("PIXEL_SCRIPTED_LOAD_GATE")
        while gate and not os.path.exists(gate):  # a model load as slow as the test wants
            time.sleep(0.01)
        self.model_id = model or "pixel-scripted"
        self.precision = precision
        self.device = device
        self.resets = 0
        self.closed = False
        self.fail_next = int(options.get("fail_next", 0))
        self.delay_sec = float(os.environ.get("PIXEL_SCRIPTED_DELAY_SEC", "0"))
        self.seen = []  # (instruction, stamps) of every score call

    def score(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        self.seen.append((instruction, [f.stamp for f in frames]))
        if self.delay_sec:
            started = os.environ.get("PIXEL_SCRIPTED_STEP_STARTED")
            if started:  # tells a test that a slow step is under way, and in which process
                with open(started, "a") as handle:
                    handle.write(f"{os.getpid()}\n")
            time.sleep(self.delay_sec)  # stands in for a model's compute time
        blue = float(frames[-1].rgb[..., 2].mean())
        for frame in frames:
            if 150 <= float(frame.rgb[..., 2].mean()) < 200:
                raise ValueError(f"cannot process the frame stamped {frame.stamp} (scripted)")
        if self.fail_next > 0 or blue >= 250:
            self.fail_next = max(0, self.fail_next - 1)
            raise RuntimeError("CUDA out of memory (scripted)")
        red = [float(f.rgb[..., 0].mean()) / 255.0 for f in frames]
        if blue >= 200:
            red[-1] = float("nan")
        green = [float(f.rgb[..., 1].mean()) / 255.0 for f in frames]
        return ModelOutput(progress=red, stamps=[f.stamp for f in frames], backend=self.name,
                           success=green)

    def prefer(self, instruction, clip_a, clip_b) -> float:
        gate = os.environ.get("PIXEL_SCRIPTED_PREFER_GATE")
        while gate and not os.path.exists(gate):  # a slow comparison, released by the test
            time.sleep(0.01)
        last_a = float(clip_a[-1].rgb[..., 0].mean()) / 255.0
        last_b = float(clip_b[-1].rgb[..., 0].mean()) / 255.0
        return float(1.0 / (1.0 + np.exp(-10.0 * (last_a - last_b))))

    def reset(self) -> None:
        self.resets += 1

    def close(self) -> None:
        self.closed = True


class PixelScriptedVerifier(PixelScriptedBackend):
    """A second opinion the test paints apart from the first model's: success = mean blue / 149.

    Blue under 150 is no fault for either backend, so one frame carries both models' answers.
    """

    name = "pixel_scripted_verifier"
    capabilities = Capabilities(progress=True, success=True, preference=False)

    def score(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        output = super().score(instruction, frames)
        blue = [min(1.0, float(f.rgb[..., 2].mean()) / 149.0) for f in frames]
        return ModelOutput(progress=output.progress, stamps=output.stamps, backend=self.name, success=blue)


register_backend(PixelScriptedBackend.name, PixelScriptedBackend)
register_backend(PixelScriptedVerifier.name, PixelScriptedVerifier)
