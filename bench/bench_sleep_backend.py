# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A benchmark-only plugin backend: each score takes a set time (emulating a model) and is logged.

Registered as backend ``bench_sleep`` when imported (the node imports it with
``model.plugin_modules:=bench_sleep_backend`` and ``bench/`` on PYTHONPATH). ``model.id`` is the
time per step in seconds (e.g. ``0.1``). With ``BENCH_SLEEP_LOG`` set, every score call appends one
JSON line: wall-clock start and end of the call and the newest frame's stamp, so the benchmark can
split image->estimate latency into before the model, the model, and after it.

Progress is a constant 0.3 and there is no success head, so the task monitor never ends the
episode on success (run the node with ``timeout.episode_sec:=0.0``).
"""
import json
import os
import threading
import time
from typing import Sequence

from robo_reward_ros.models.loading.backend_registry import register_backend
from robo_reward_ros.models.reward_model import Capabilities, Frame, ModelOutput, RewardModel


class SleepBackend(RewardModel):
    name = "bench_sleep"
    capabilities = Capabilities(progress=True, success=False, preference=False)

    def __init__(self, model: str = "0.1", precision: str = "fp32", device: str = "cpu", **options):
        self.model_id = model
        self.seconds = float(model or 0.0)
        self.precision = precision
        self.device = device
        path = os.environ.get("BENCH_SLEEP_LOG")
        self._log = open(path, "a", buffering=1, encoding="utf-8") if path else None
        self._lock = threading.Lock()

    def score(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        start = time.time()
        time.sleep(self.seconds)  # the pipeline measures the call itself; that figure is the model time
        end = time.time()
        if self._log is not None:
            with self._lock:
                self._log.write(json.dumps({"start": start, "end": end, "stamp": frames[-1].stamp,
                                            "frames": len(frames)}) + "\n")
        return ModelOutput(progress=[0.3] * len(frames), stamps=[f.stamp for f in frames], backend=self.name)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


register_backend(SleepBackend.name, SleepBackend)
