# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Training curves: losses per step (and their running mean), held-out figures per epoch."""
from __future__ import annotations

import os
from typing import Any, Dict, List

import numpy as np


def _smooth(values: List[float], window: int) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if len(values) < window or window < 2:
        return values
    kernel = np.ones(window) / window
    head = np.array([values[:i + 1].mean() for i in range(window - 1)])
    return np.concatenate([head, np.convolve(values, kernel, mode="valid")])


def plot_curves(history: Dict[str, List[Dict[str, Any]]], path: str) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    train, evals = history.get("train", []), history.get("eval", [])
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    if train:
        steps = [r["step"] for r in train]
        window = max(1, len(train) // 30)
        for key, colour in (("loss", "black"), ("progress", "tab:blue"), ("success", "tab:green"),
                            ("preference", "tab:purple")):
            values = [r[key] for r in train]
            left.plot(steps, values, color=colour, alpha=0.15, linewidth=0.8)
            left.plot(steps, _smooth(values, window), color=colour, label=key)
        left.set_xlabel("step")
        left.set_ylabel("loss")
        left.set_title("training loss (weighted total and terms)")
        left.legend()
        left.grid(alpha=0.3)
    keys = ("voc_pearson", "kendall_tau_a", "success_failure_diff", "preference_accuracy",
            "success_f1", "failure_f1")
    if evals and any(k in evals[0] for k in keys):
        epochs = [e["epoch"] for e in evals]
        for key in keys:
            values = [e.get(key) for e in evals]
            if any(v is not None for v in values):
                right.plot(epochs, [np.nan if v is None else v for v in values], marker="o", label=key)
        right.set_xticks(epochs)
        right.set_xlabel("epoch")
        right.set_title("held-out episodes (robo-reward eval)")
        right.legend(fontsize=8)
        right.grid(alpha=0.3)
    else:
        right.text(0.5, 0.5, "no held-out episodes", ha="center", va="center")
        right.set_axis_off()
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path
