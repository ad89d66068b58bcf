# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Load the verifier (a second model) beside the first, after checking that it fits.

The node and the offline replay call this after the first model is loaded, so the memory it
reports free is what the verifier really gets. The check refuses a verifier that cannot fit; one
whose size cannot be told (a plugin backend, a checkpoint not cached here) loads unchecked, and the
report says so.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Tuple

from robo_reward_ros.models.loading.memory_fit import (available_bytes, fit_problem, gib, needed_bytes,
                                                       resident_bytes)


@dataclasses.dataclass(frozen=True)
class MemoryReport:
    """Both models' memory as configure saw it: the first one's weights, the verifier's need and weights."""

    device: str
    model_bytes: Optional[int]
    verifier_need_bytes: Optional[int]
    free_bytes: Optional[int]
    where: str
    verifier_bytes: Optional[int] = None

    def describe(self) -> str:
        checked = ("not checked: its size is unknown here" if self.verifier_need_bytes is None or
                   self.free_bytes is None else f"fits: {gib(self.free_bytes)} free")
        return (f"model {gib(self.model_bytes)}, verifier {gib(self.verifier_bytes)} loaded "
                f"(estimated {gib(self.verifier_need_bytes)}; {checked} on {self.where})")


def load_verifier(spec, model, load: Callable[..., object]) -> Tuple[object, MemoryReport]:
    """Return the verifier for ``spec`` (settings.ModelSettings) beside the loaded ``model``, and the memory report.

    ``load`` is ``load_reward_model`` (or a caller's wrapper of it). Raises RuntimeError when the
    verifier cannot fit.
    """
    from robo_reward_ros.models.loading.precision import resolve_device
    device = str(resolve_device(spec.device))
    need = needed_bytes(spec.model_id, spec.precision)
    free, where = available_bytes(device)
    report = MemoryReport(device, resident_bytes(model), need, free, where)
    problem = fit_problem(f"the verifier {spec.model_id or spec.backend} ({spec.precision})", need, free,
                          where, f"the model ({gib(report.model_bytes)})")
    if problem:
        raise RuntimeError(problem)
    verifier = load(spec.model_id, spec.backend, spec.precision, spec.device, **dict(spec.options))
    return verifier, dataclasses.replace(report, verifier_bytes=resident_bytes(verifier))
