# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Which spans of a ranking table go into a filtered dataset, and why the others stay out.

The ranking (``robo-reward rank``'s Parquet or CSV) is a file a user may have edited, merged or
made elsewhere, so it is checked here before anything is read from the datasets it names: the
columns, their values, and that every source still exists. The selection rule is kept with the
decision for every row, because a filtered dataset is only as useful as the record of how it was
chosen (the manifest).
"""
from __future__ import annotations

import dataclasses
import math
import os
from typing import Dict, List, Optional, Sequence, Tuple

REQUIRED_COLUMNS = ("source", "kind", "episode", "instruction", "start_frame", "end_frame", "start_time",
                    "end_time", "score", "rank", "ranked_by")
OPTIONAL_FLOATS = ("final_progress", "progress_gain", "success", "preference")
KINDS = ("lerobot", "bag")


class RankingError(ValueError):
    """The ranking table cannot be used; the message names the file and what is wrong."""


@dataclasses.dataclass(frozen=True)
class RankedSpan:
    """One row of a ranking: a span of one episode, scored against one instruction."""

    row: int  # position in the table (0-based), so the manifest can point back at it
    source: str
    kind: str
    episode: str
    instruction: str
    start_frame: int
    end_frame: int
    start_time: float
    end_time: float
    score: float
    rank: int
    ranked_by: str
    extra: Tuple[Tuple[str, float], ...] = ()  # final_progress, progress_gain, ... as the table has them

    @property
    def frames(self) -> int:
        return self.end_frame - self.start_frame

    def key(self) -> Tuple[str, str, int, int]:
        """Return what identifies the frames themselves (two instructions may pick the same span)."""
        return (self.source, self.episode, self.start_frame, self.end_frame)

    def describe(self) -> Dict[str, object]:
        """Return the row as the manifest writes it (NaN as None, so the JSON stays standard)."""
        values: Dict[str, object] = {
            "row": self.row, "source": self.source, "kind": self.kind, "episode": self.episode,
            "instruction": self.instruction, "start_frame": self.start_frame, "end_frame": self.end_frame,
            "start_time": self.start_time, "end_time": self.end_time, "score": _finite(self.score),
            "rank": self.rank, "ranked_by": self.ranked_by}
        values.update({name: _finite(value) for name, value in self.extra})
        return values


@dataclasses.dataclass(frozen=True)
class SelectionRule:
    """``--top`` (best K per instruction), ``--min-score`` and ``--instruction``; all given ones must hold."""

    top: Optional[int] = None
    min_score: Optional[float] = None
    instructions: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.top is None and self.min_score is None and not self.instructions:
            raise ValueError("say what to keep: --top K, --min-score X and/or --instruction TEXT")
        if self.top is not None and self.top < 1:
            raise ValueError(f"--top must be >= 1, not {self.top}")
        if self.min_score is not None and not math.isfinite(self.min_score):
            raise ValueError(f"--min-score must be a number, not {self.min_score}")

    def describe(self) -> Dict[str, object]:
        return {"top_per_instruction": self.top, "min_score": self.min_score,
                "instructions": list(self.instructions) or None}

    def text(self) -> str:
        """Return the rule in words, for the manifest and the summary line."""
        parts = []
        if self.instructions:
            parts.append("instruction in " + ", ".join(repr(i) for i in self.instructions))
        if self.min_score is not None:
            parts.append(f"score >= {self.min_score:g}")
        if self.top is not None:
            parts.append(f"the best {self.top} per instruction (by rank)")
        return "; ".join(parts)


@dataclasses.dataclass
class Selection:
    """The rule's outcome: the rows kept (ranking order) and every other row with its reason."""

    rule: SelectionRule
    kept: List[RankedSpan]
    left_out: List[Tuple[RankedSpan, str]]


def _finite(value: float) -> Optional[float]:
    return float(value) if value is not None and math.isfinite(value) else None


def read_ranking(path: str) -> List[RankedSpan]:
    """Read a ranking table (``.csv``, else Parquet) and check its columns and values."""
    if not os.path.isfile(path):
        raise RankingError(f"{path}: no such ranking file")
    try:
        if path.lower().endswith(".csv"):
            import pyarrow.csv as pacsv
            # Episode names and sources stay text even where they look like numbers.
            convert = pacsv.ConvertOptions(column_types={"source": "string", "episode": "string",
                                                         "instruction": "string", "kind": "string",
                                                         "ranked_by": "string"})
            table = pacsv.read_csv(path, convert_options=convert)
        else:
            import pyarrow.parquet as pq
            table = pq.read_table(path)
    except ImportError:
        raise RuntimeError("reading a ranking needs pyarrow (pinned in requirements/tools.txt)") from None
    except Exception as exc:  # pyarrow raises ArrowInvalid and friends for a file of another kind
        raise RankingError(f"{path}: not a readable Parquet or CSV table ({type(exc).__name__}: {exc})") from exc
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise RankingError(f"{path}: missing column(s) {', '.join(missing)} (a ranking from robo-reward rank "
                           f"has {', '.join(REQUIRED_COLUMNS)})")
    columns = {name: table.column(name).to_pylist() for name in REQUIRED_COLUMNS}
    extras = [name for name in OPTIONAL_FLOATS if name in table.column_names]
    extra_values = {name: table.column(name).to_pylist() for name in extras}
    spans = []
    for index in range(table.num_rows):
        try:
            span = _span(index, {name: columns[name][index] for name in REQUIRED_COLUMNS},
                         tuple((name, _float(extra_values[name][index])) for name in extras))
        except (TypeError, ValueError) as exc:
            raise RankingError(f"{path}: row {index + 1}: {exc}") from None
        spans.append(span)
    return spans


def _float(value) -> float:
    return math.nan if value is None else float(value)


def _span(index: int, values: Dict[str, object], extra) -> RankedSpan:
    for name in ("source", "kind", "episode", "instruction"):
        if values[name] is None or str(values[name]) == "":
            raise ValueError(f"empty {name}")
    kind = str(values["kind"])
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} (expected {' or '.join(KINDS)})")
    if values["start_frame"] is None or values["end_frame"] is None or values["rank"] is None:
        raise ValueError("empty start_frame, end_frame or rank")
    start, end = int(values["start_frame"]), int(values["end_frame"])
    if start < 0 or end <= start:
        raise ValueError(f"span [{start}, {end}) holds no frame (end_frame is exclusive)")
    return RankedSpan(row=index, source=str(values["source"]), kind=kind, episode=str(values["episode"]),
                      instruction=str(values["instruction"]), start_frame=start, end_frame=end,
                      start_time=_float(values["start_time"]), end_time=_float(values["end_time"]),
                      score=_float(values["score"]), rank=int(values["rank"]),
                      ranked_by=str(values["ranked_by"] or ""), extra=extra)


def select(spans: Sequence[RankedSpan], rule: SelectionRule) -> Selection:
    """Apply ``rule``: instruction first, then the score floor, then the best ``top`` by rank per instruction."""
    known = sorted({s.instruction for s in spans})
    unknown = [i for i in rule.instructions if i not in known]
    if unknown:
        raise RankingError(f"no instruction {', '.join(repr(i) for i in unknown)} in the ranking "
                           f"(it has: {', '.join(repr(i) for i in known)})")
    kept: List[RankedSpan] = []
    left_out: List[Tuple[RankedSpan, str]] = []
    by_instruction: Dict[str, List[RankedSpan]] = {}
    for span in spans:
        if rule.instructions and span.instruction not in rule.instructions:
            left_out.append((span, "instruction not asked for"))
        elif rule.min_score is not None and not span.score >= rule.min_score:  # NaN fails too
            left_out.append((span, f"score {_text(span.score)} < {rule.min_score:g}"))
        else:
            by_instruction.setdefault(span.instruction, []).append(span)
    for instruction in sorted(by_instruction):
        ordered = sorted(by_instruction[instruction], key=lambda s: (s.rank, s.row))
        limit = len(ordered) if rule.top is None else rule.top
        kept += ordered[:limit]
        left_out += [(s, f"rank {s.rank}: not among the best {rule.top} left for this instruction")
                     for s in ordered[limit:]]
    left_out.sort(key=lambda item: item[0].row)
    return Selection(rule, kept, left_out)


def _text(value: float) -> str:
    return "NaN" if not math.isfinite(value) else f"{value:.4g}"


def check_sources(spans: Sequence[RankedSpan]) -> str:
    """Return the selection's one kind; refuse a mix of kinds, an empty selection or a source that is gone."""
    if not spans:
        raise RankingError("the selection is empty: no row of the ranking passes the rule (loosen --top, "
                           "--min-score or --instruction)")
    kinds = sorted({s.kind for s in spans})
    if len(kinds) > 1:
        raise RankingError("the selection holds both LeRobot and bag sources; one output is either a dataset "
                           "or a bag folder: filter each kind separately (--instruction, or a ranking per kind)")
    for source in sorted({s.source for s in spans}):
        if not os.path.exists(source):
            raise RankingError(f"source {source} no longer exists (the ranking names it; was it moved?)")
    return kinds[0]
