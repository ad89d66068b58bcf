# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Ranking episodes (or windows of them) by what the reward model says, for choosing training data.

Kept apart from the scoring so the order, the spans and the table format can be checked by hand:
``robo-reward filter`` reads the table this module writes, so its columns and types are a contract
(docs/data-selection.md). Nothing here loads a model, Ray, pyarrow or matplotlib at import time.
"""
from __future__ import annotations

import csv
import math
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

RANK_BY = ("final_progress", "progress_gain", "success", "preference")
# The ranked table: (name, type) in column order. robo-reward filter reads exactly these.
COLUMNS: Tuple[Tuple[str, type], ...] = (
    ("source", str), ("kind", str), ("episode", str), ("instruction", str),
    ("start_frame", int), ("end_frame", int), ("start_time", float), ("end_time", float),
    ("final_progress", float), ("progress_gain", float), ("success", float), ("preference", float),
    ("score", float), ("rank", int), ("ranked_by", str))
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)
TABLE_SUFFIXES = (".parquet", ".csv")


class SpanCutter:
    """Where windows of ``window`` frames, every ``stride`` frames, begin and end as frames stream by.

    ``window`` 0 means the whole episode. A window opens at every multiple of ``stride``; it is
    complete after ``window`` frames. When the episode ends, the windows still open are partial:
    if a complete window ended on the last frame they add nothing and are dropped, else the
    earliest of them (it holds the later ones) is kept, ending at the last frame. So every frame
    is in some window and no kept window lies inside another.
    """

    def __init__(self, window: int = 0, stride: int = 0) -> None:
        if window < 0 or stride < 0:
            raise ValueError("--window and --stride must be >= 0")
        if window and stride == 0:
            stride = window
        if stride and not window:
            raise ValueError("--stride needs --window")
        self.window, self.stride = window, stride

    def opens_at(self, index: int) -> bool:
        """Tell whether a window starts at frame ``index``."""
        return index == 0 if not self.window else index % self.stride == 0

    def complete(self, start: int, index: int) -> bool:
        """Tell whether the window begun at ``start`` is full once frame ``index`` is in."""
        return bool(self.window) and index - start + 1 >= self.window

    def partial_kept(self, open_starts: Sequence[int], length: int, last_complete_end: Optional[int]) -> List[int]:
        """Return which of the windows open at the episode's end are kept (at most one)."""
        if not open_starts or last_complete_end == length:
            return []
        return [min(open_starts)]


def window_spans(length: int, window: int = 0, stride: int = 0) -> List[Tuple[int, int]]:
    """Return the (start, end) frame spans, end exclusive, that :class:`SpanCutter` cuts from ``length`` frames."""
    cutter = SpanCutter(window, stride)
    spans, open_starts, last_end = [], [], None
    for index in range(length):
        if cutter.opens_at(index):
            open_starts.append(index)
        for start in [s for s in open_starts if cutter.complete(s, index)]:
            spans.append((start, index + 1))
            open_starts.remove(start)
            last_end = index + 1
    spans += [(start, length) for start in cutter.partial_kept(open_starts, length, last_end)]
    return sorted(spans)


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _episode_key(episode: str):
    """Order LeRobot episode indices as numbers and bag names as text."""
    return (0, int(episode), "") if episode.isdigit() else (1, 0, episode)


def rank_rows(rows: Iterable[Dict[str, Any]], by: str) -> List[Dict[str, Any]]:
    """Return the rows with ``score``, ``rank`` (1 = best, per instruction) and ``ranked_by``, in table order.

    Higher is better for every measure; a NaN score (no success head) ranks last. Ties are broken
    by source, episode and start frame, so the order never depends on the order of scoring.
    """
    if by not in RANK_BY:
        raise ValueError(f"unknown ranking '{by}' (choose from {', '.join(RANK_BY)})")
    scored = []
    for row in rows:
        row = dict(row)
        row["score"] = _number(row.get(by))
        row["ranked_by"] = by
        scored.append(row)

    def order(row):
        score = row["score"]
        return (row["instruction"], math.isnan(score), -score if not math.isnan(score) else 0.0,
                row["source"], _episode_key(row["episode"]), row["start_frame"])

    scored.sort(key=order)
    rank, previous = 0, None
    for row in scored:
        rank = rank + 1 if row["instruction"] == previous else 1
        previous = row["instruction"]
        row["rank"] = rank
    return [{name: kind(row.get(name)) if name not in _FLOATS else _number(row.get(name))
             for name, kind in COLUMNS} for row in scored]


_FLOATS = {name for name, kind in COLUMNS if kind is float}


def table_format(path: str) -> str:
    """Return ``parquet`` or ``csv`` from the file name, or say which names are understood."""
    for suffix in TABLE_SUFFIXES:
        if path.lower().endswith(suffix):
            return suffix[1:]
    raise ValueError(f"--out {path}: the table must be a .parquet or .csv file")


def write_table(rows: Sequence[Dict[str, Any]], path: str,
                columns: Sequence[Tuple[str, type]] = COLUMNS) -> str:
    """Write rows with these typed columns as Parquet (pyarrow) or CSV, by the file name."""
    kind = table_format(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    if kind == "csv":
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow([name for name, _ in columns])
            for row in rows:
                writer.writerow([_csv_cell(row.get(name), kind_) for name, kind_ in columns])
        return path
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise RuntimeError("writing Parquet needs pyarrow (requirements/tools.txt); or write a .csv") from None
    types = {str: pa.string(), int: pa.int64(), float: pa.float64()}
    table = pa.table({name: pa.array([row.get(name) for row in rows], types[kind_])
                      for name, kind_ in columns})
    pq.write_table(table, path)
    return path


def _csv_cell(value: Any, kind: type) -> str:
    if kind is float:
        number = _number(value)
        return "nan" if math.isnan(number) else repr(number)
    return str(value)


def read_table(path: str, columns: Sequence[Tuple[str, type]] = COLUMNS) -> List[Dict[str, Any]]:
    """Read a table written by :func:`write_table` back into typed rows."""
    if table_format(path) == "parquet":
        import pyarrow.parquet as pq
        return pq.read_table(path).to_pylist()
    kinds = dict(columns)
    with open(path, newline="") as handle:
        return [{name: kinds.get(name, str)(value) for name, value in row.items()}
                for row in csv.DictReader(handle)]
