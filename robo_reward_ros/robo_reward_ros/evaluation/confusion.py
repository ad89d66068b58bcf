# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The video x instruction confusion matrix: whether the model's progress depends on the instruction at all.

A reward model that ignores the text ranks the same videos first whatever it is asked, and is
useless for choosing data. Robometer's paper reads this from a matrix of every demo against every
instruction: each column (one instruction) is normalised over the videos, and the mean of the
diagonal (each video's own instruction) says how much of an instruction's score goes to its own
videos. Normalising a column by its sum makes the floor exact: a model blind to the instruction
gives every column the same shares, so its diagonal mean is 1/K for K instructions, whatever its
scores; 1.0 means each instruction's score goes to its own videos only.

Episodes that share an instruction are one row (their mean score), so the matrix is K x K.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np


def column_normalised(matrix) -> np.ndarray:
    """Divide each column by its sum over the rows; a column summing to 0 (or NaN) becomes NaN."""
    values = np.asarray(matrix, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"a confusion matrix is 2-D, got shape {values.shape}")
    if (values < 0).any():
        raise ValueError("column normalisation needs scores >= 0 (progress or success probability)")
    sums = values.sum(axis=0, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums > 0, values / np.where(sums > 0, sums, 1.0), np.nan)


def diagonal_mean(matrix) -> float:
    """Return the mean of the column-normalised matrix's diagonal (rows and columns in the same order)."""
    normalised = column_normalised(matrix)
    if normalised.shape[0] != normalised.shape[1]:
        raise ValueError(f"the diagonal needs a square matrix, got {normalised.shape}")
    diagonal = np.diag(normalised)
    return float(np.nanmean(diagonal)) if np.isfinite(diagonal).any() else math.nan


def grouped_matrix(rows: Sequence[Dict[str, Any]], value: str = "final_progress"
                   ) -> Tuple[List[str], List[int], np.ndarray]:
    """Return (instructions, episodes per instruction, K x K matrix) from per-episode score rows.

    Each row is one episode scored against one instruction: ``own_instruction`` (the episode's),
    ``instruction`` (asked) and ``value``. Row k of the matrix is the mean over the episodes whose
    own instruction is the k-th; column j the j-th instruction asked; both in first-seen order.
    """
    order: "OrderedDict[str, None]" = OrderedDict()
    for row in rows:
        order.setdefault(row["own_instruction"], None)
    instructions = list(order)
    position = {text: i for i, text in enumerate(instructions)}
    sums = np.zeros((len(instructions), len(instructions)))
    counts = np.zeros_like(sums)
    episodes: Dict[str, set] = {text: set() for text in instructions}
    for row in rows:
        if row["instruction"] not in position:
            raise ValueError(f"instruction {row['instruction']!r} is no episode's own instruction")
        i, j = position[row["own_instruction"]], position[row["instruction"]]
        sums[i, j] += float(row[value])
        counts[i, j] += 1
        episodes[row["own_instruction"]].add((row["source"], row["episode"]))
    with np.errstate(invalid="ignore"):
        matrix = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
    return instructions, [len(episodes[t]) for t in instructions], matrix


def matrix_rows(label: str, instructions: Sequence[str], counts: Sequence[int], matrix) -> List[Dict[str, Any]]:
    """Return the matrix as table rows (one per video group and instruction), with the normalised value."""
    normalised = column_normalised(matrix)
    return [{"model": label, "video_instruction": video, "episodes": int(counts[i]), "instruction": asked,
             "mean_score": float(matrix[i, j]), "column_normalised": float(normalised[i, j])}
            for i, video in enumerate(instructions) for j, asked in enumerate(instructions)]


MATRIX_COLUMNS = (("model", str), ("video_instruction", str), ("episodes", int), ("instruction", str),
                  ("mean_score", float), ("column_normalised", float))


def plot_confusion(panels: Sequence[Tuple[str, np.ndarray]], instructions: Sequence[str], path: str) -> str:
    """Draw each (title, matrix) column-normalised as a heat map side by side; write a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    size = len(instructions)
    labels = [text if len(text) <= 32 else text[:30] + ".." for text in instructions]
    side = max(4.0, 0.45 * size + 2.5)
    fig, axes = plt.subplots(1, len(panels), figsize=(side * len(panels) + 1, side), squeeze=False)
    for ax, (title, matrix) in zip(axes[0], panels):
        normalised = column_normalised(matrix)
        image = ax.imshow(normalised, vmin=0.0, vmax=max(0.5, float(np.nanmax(normalised))), cmap="viridis")
        ax.set_title(f"{title}\ndiagonal mean {diagonal_mean(matrix):.3f} (chance {1.0 / size:.3f})", fontsize=9)
        ax.set_xticks(range(size))
        ax.set_yticks(range(size))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_xlabel("instruction asked (columns normalised)")
        ax.set_ylabel("videos (own instruction)")
        if size <= 12:
            for i in range(size):
                for j in range(size):
                    if np.isfinite(normalised[i, j]):
                        ax.text(j, i, f"{normalised[i, j]:.2f}", ha="center", va="center", fontsize=6,
                                color="white" if normalised[i, j] < 0.5 * image.norm.vmax else "black")
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout(w_pad=3.0)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
