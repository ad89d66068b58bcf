# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""POISE (Preference-Ordered Isotonic Score Editing): per-clip scores edited to agree with pairwise preferences.

Why: labels for fine-tuning come as pointwise scores and as pairwise preferences, and the two
disagree (TrustRoboReward's corpus: 20.15% of its pairs were reversed). A model trained on both
learns to contradict itself; POISE edits the scores, as little as possible, so that they follow
the preferences (docs/fine-tuning.md, "Scores that agree with the preferences").

Definitions. Only clips of the same instruction are compared. A pair (a preferred over b) is
*reversed* when score(a) < score(b) and *tied* when the scores are equal: a tie is not a
reversal (the scores leave the preference open, they do not contradict it; editing pools
conflicting clips into ties).

The consistent order, per instruction: the preferences are a directed graph (preferred -> other).
Where they form cycles (a > b > c > a: a strongly connected component, scipy.sparse.csgraph), no
scores can agree with every pair. The clips of each cycle are ranked by net wins inside it (wins
minus losses), ties by original score (higher first), then id; the cycle's pairs that go against
that ranking are *set aside*: counted and reported, not enforced. The other pairs form an acyclic
graph, the consistent order; after editing none of them is reversed.

The edit: the scores closest to the original ones (least squares) with score(a) >= score(b) for
every enforced pair. On this partial order the projection is found through its dual, a
non-negative least squares problem (scipy.optimize.nnls); its solution fixes a total order (a
topological order of the enforced pairs, by descending edited score) along which
scipy.optimize.isotonic_regression gives the edited scores, pooled means of the original ones.
A clip that no conflict reaches keeps its score exactly; clips without pairs are never touched.
"""
from __future__ import annotations

import csv
import dataclasses
import graphlib
import json
import math
import os
from typing import Any, Dict, Iterator, List, Sequence, Tuple

import numpy as np

EXTENSIONS = (".jsonl", ".ndjson", ".csv")


@dataclasses.dataclass(frozen=True)
class Clip:
    id: str
    instruction: str
    score: float
    extra: Tuple[Tuple[str, Any], ...] = ()  # the row's other fields, written back unchanged
    where: str = ""  # file:line


@dataclasses.dataclass(frozen=True)
class Pair:
    instruction: str
    preferred: str  # clip id
    other: str  # clip id
    where: str = ""


@dataclasses.dataclass(frozen=True)
class Counts:
    reversed: int = 0
    tied: int = 0
    agreeing: int = 0

    @property
    def total(self) -> int:
        return self.reversed + self.tied + self.agreeing

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.reversed + other.reversed, self.tied + other.tied, self.agreeing + other.agreeing)


def count_reversals(pairs: Sequence[Pair], scores: Dict[str, float]) -> Counts:
    """Count the pairs whose preferred clip scores lower (reversed), the same (tied) or higher."""
    reversed_ = sum(scores[p.preferred] < scores[p.other] for p in pairs)
    tied = sum(scores[p.preferred] == scores[p.other] for p in pairs)
    return Counts(int(reversed_), int(tied), len(pairs) - int(reversed_) - int(tied))


@dataclasses.dataclass
class InstructionReport:
    instruction: str
    clips: int
    pairs: int
    before: Counts  # all pairs, original scores
    after: Counts  # all pairs, edited scores
    consistent_before: Counts  # the enforced pairs (the consistent order), original scores
    consistent_after: Counts  # the same, edited: never a reversal
    cycles: List[List[str]]  # each cycle's clips in the ranking used
    cyclic_pairs: int  # pairs inside cycles
    set_aside: List[Pair]  # pairs inside cycles against the ranking: not enforced
    edited: int  # clips whose score changed
    abs_edit: float  # sum of |edited - original|

    def as_dict(self) -> Dict[str, Any]:
        row = dataclasses.asdict(self)
        row["set_aside"] = [{"preferred": p.preferred, "other": p.other} for p in self.set_aside]
        row["mean_abs_edit"] = self.abs_edit / self.clips if self.clips else 0.0
        return row


@dataclasses.dataclass
class PoiseResult:
    clips: List[Clip]
    scores: Dict[str, float]  # clip id -> edited score
    reports: List[InstructionReport]

    def total(self) -> InstructionReport:
        """Return the sums over every instruction (its ``instruction`` is ``"all"``)."""
        total = InstructionReport("all", 0, 0, Counts(), Counts(), Counts(), Counts(), [], 0, [], 0, 0.0)
        for r in self.reports:
            total.clips += r.clips
            total.pairs += r.pairs
            total.before += r.before
            total.after += r.after
            total.consistent_before += r.consistent_before
            total.consistent_after += r.consistent_after
            total.cycles += r.cycles
            total.cyclic_pairs += r.cyclic_pairs
            total.set_aside += r.set_aside
            total.edited += r.edited
            total.abs_edit += r.abs_edit
        return total

    def as_dict(self) -> Dict[str, Any]:
        return {"total": self.total().as_dict(), "instructions": [r.as_dict() for r in self.reports]}


# -- files -----------------------------------------------------------------------------------------

def _rows(path: str, kind: str) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """Yield ``(file:line, row)`` of a JSONL (one object a line) or CSV (with a header) file."""
    extension = os.path.splitext(path)[1].lower()
    if extension not in EXTENSIONS:
        raise ValueError(f"{path}: a {kind} file is JSONL (.jsonl) or CSV (.csv)")
    with open(path, newline="", encoding="utf-8") as handle:
        if extension == ".csv":
            reader = csv.DictReader(handle)
            for row in reader:
                yield f"{path}:{reader.line_num}", {k.strip(): v for k, v in row.items() if k is not None}
            return
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{number}: each line is one JSON object, not {type(row).__name__}")
            yield f"{path}:{number}", row


def _text(row: Dict[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{where}: no {key!r}")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"{where}: {key} {value!r} is not text")
    return str(value).strip()


def _number(value: Any, where: str, clip: str) -> float:
    number = None
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            number = float(value)
        except ValueError:
            pass
    if number is None or not math.isfinite(number):
        raise ValueError(f"{where}: the score of clip {clip!r} is {value!r}, not a finite number")
    return number


def read_clips(path: str) -> List[Clip]:
    """Read clips (fields ``id``, ``instruction``, ``score``; others kept) from JSONL or CSV."""
    clips: List[Clip] = []
    seen: Dict[str, str] = {}
    for where, row in _rows(path, "scores"):
        clip = _text(row, "id", where)
        if clip in seen:
            raise ValueError(f"{where}: clip id {clip!r} again (first at {seen[clip]}); ids are unique")
        seen[clip] = where
        score = _number(row.get("score"), where, clip)
        extra = tuple((k, v) for k, v in row.items() if k not in ("id", "instruction", "score"))
        clips.append(Clip(clip, _text(row, "instruction", where), score, extra, where))
    if not clips:
        raise ValueError(f"{path}: no clips")
    return clips


def read_pairs(path: str) -> List[Pair]:
    """Read preferences (fields ``instruction``, ``a``, ``b``, ``preferred``: a, b or the clip's id)."""
    pairs = []
    for where, row in _rows(path, "pairs"):
        instruction, a, b = (_text(row, key, where) for key in ("instruction", "a", "b"))
        preferred = _text(row, "preferred", where)
        if a == b:
            raise ValueError(f"{where}: clip {a!r} against itself")
        meant = {preferred} & {a, b}  # the clip's id, or the letter naming its column
        if preferred.lower() in ("a", "b"):
            meant.add(a if preferred.lower() == "a" else b)
        if len(meant) != 1:
            raise ValueError(f"{where}: preferred is {preferred!r}; give a, b, or the id {a!r} or {b!r}"
                             + (" (ambiguous: a clip is named so)" if meant else ""))
        preferred = meant.pop()
        pairs.append(Pair(instruction, preferred, b if preferred == a else a, where))
    return pairs


def write_clips(path: str, result: PoiseResult) -> None:
    """Write the clips with their edited ``score`` and their ``original_score`` (JSONL or CSV)."""
    if os.path.splitext(path)[1].lower() not in EXTENSIONS:
        raise ValueError(f"{path}: write JSONL (.jsonl) or CSV (.csv)")
    rows = [{"id": c.id, "instruction": c.instruction, "score": result.scores[c.id], "original_score": c.score,
             **{k: v for k, v in c.extra if k != "original_score"}} for c in result.clips]
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        if path.lower().endswith(".csv"):
            fields = list(dict.fromkeys(k for row in rows for k in row))
            writer = csv.DictWriter(handle, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
        else:
            for row in rows:
                handle.write(json.dumps(row) + "\n")


# -- the edit ----------------------------------------------------------------------------------------

def check_pairs(clips: Sequence[Clip], pairs: Sequence[Pair]) -> Dict[str, Clip]:
    """Return the clips by id; raise ValueError for a duplicate id, an unknown clip or a pair across instructions."""
    by_id: Dict[str, Clip] = {}
    for clip in clips:
        if clip.id in by_id:
            raise ValueError(f"{clip.where or 'clips'}: clip id {clip.id!r} again; ids are unique")
        by_id[clip.id] = clip
    for pair in pairs:
        where = pair.where or f"pair {pair.preferred!r} > {pair.other!r}"
        for clip in (pair.preferred, pair.other):
            if clip not in by_id:
                raise ValueError(f"{where}: clip {clip!r} has no score (missing from the scores file)")
        first, second = by_id[pair.preferred], by_id[pair.other]
        if first.instruction != second.instruction:
            raise ValueError(f"{where}: a pair across instructions: {first.id!r} is {first.instruction!r}, "
                             f"{second.id!r} is {second.instruction!r}; only clips of one instruction compare")
        if pair.instruction != first.instruction:
            raise ValueError(f"{where}: the pair names instruction {pair.instruction!r}, but its clips are "
                             f"{first.instruction!r}")
    return by_id


@dataclasses.dataclass
class ConsistentOrder:
    cycles: List[List[int]]  # clip indices of each cycle, in the ranking used
    enforced: List[Tuple[int, int]]  # (preferred, other) index pairs, acyclic, deduplicated
    enforced_pairs: List[Pair]
    set_aside: List[Pair]
    cyclic_pairs: int


def consistent_order(ids: Sequence[str], scores: np.ndarray, pairs: Sequence[Pair]) -> ConsistentOrder:
    """Split one instruction's pairs into the enforced (acyclic) ones and those set aside from cycles."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    index = {clip: k for k, clip in enumerate(ids)}
    edges = [(index[p.preferred], index[p.other]) for p in pairs]
    n = len(ids)
    if not edges:
        return ConsistentOrder([], [], [], [], 0)
    graph = coo_matrix((np.ones(len(edges)), tuple(np.array(edges).T)), shape=(n, n)).tocsr()
    count, component = connected_components(graph, directed=True, connection="strong")
    rank = np.zeros(n, dtype=int)
    cycles = []
    for label in range(count):
        members = [int(m) for m in np.flatnonzero(component == label)]
        if len(members) < 2:
            continue
        net = dict.fromkeys(members, 0)
        for winner, loser in edges:
            if component[winner] == label and component[loser] == label:
                net[winner] += 1
                net[loser] -= 1
        ranking = sorted(members, key=lambda m: (-net[m], -scores[m], ids[m]))
        rank[ranking] = np.arange(len(ranking))
        cycles.append(ranking)
    enforced, enforced_pairs, aside, cyclic = [], [], [], 0
    for pair, (winner, loser) in zip(pairs, edges):
        inside = component[winner] == component[loser]
        cyclic += int(inside)
        if inside and rank[winner] > rank[loser]:
            aside.append(pair)
        else:
            enforced_pairs.append(pair)
            enforced.append((winner, loser))
    return ConsistentOrder(cycles, sorted(set(enforced)), enforced_pairs, aside, cyclic)


def _linear_extension(n: int, edges: Sequence[Tuple[int, int]], values: np.ndarray) -> np.ndarray:
    """Order 0..n-1 by descending ``values``, equal ones (within rounding) in a topological order of ``edges``."""
    predecessors: Dict[int, set] = {k: set() for k in range(n)}
    for winner, loser in edges:
        predecessors[loser].add(winner)
    topological = list(graphlib.TopologicalSorter(predecessors).static_order())
    position = {node: p for p, node in enumerate(topological)}
    tolerance = 1e-9 * max(1.0, float(np.abs(values).max()))
    level, levels, previous = 0, {}, None
    for k in sorted(range(n), key=lambda k: -values[k]):
        if previous is not None and values[previous] - values[k] > tolerance:
            level += 1
        levels[k], previous = level, k
    order = sorted(range(n), key=lambda k: (levels[k], position[k]))
    at = {node: p for p, node in enumerate(order)}
    if any(at[winner] > at[loser] for winner, loser in edges):
        order = topological  # rounding put a pair backwards: any topological order is still consistent
    return np.asarray(order)


def _project(scores: np.ndarray, edges: Sequence[Tuple[int, int]]) -> np.ndarray:
    """Return the least-squares closest scores with ``y[a] >= y[b]`` for every edge (a, b)."""
    from scipy.optimize import isotonic_regression, nnls
    constraints = np.zeros((len(edges), len(scores)))
    for row, (winner, loser) in enumerate(edges):
        constraints[row, loser], constraints[row, winner] = 1.0, -1.0  # y[loser] - y[winner] <= 0
    # Dual of min |y - s|^2 s.t. C y <= 0: min |C^T l - s|^2 over l >= 0, and y = s - C^T l.
    multipliers, _ = nnls(constraints.T, scores, maxiter=max(100, 10 * len(edges)))
    closest = scores - constraints.T @ multipliers
    order = _linear_extension(len(scores), edges, closest)
    edited = np.empty_like(scores)
    edited[order] = isotonic_regression(scores[order], increasing=False).x
    return edited


def edit_scores(scores: np.ndarray, edges: Sequence[Tuple[int, int]]) -> np.ndarray:
    """Edit ``scores`` so that ``scores[a] >= scores[b]`` for each (a, b) of an acyclic ``edges``: least squares."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    edited = np.asarray(scores, dtype=float).copy()
    if not edges:
        return edited
    n = len(edited)
    graph = coo_matrix((np.ones(len(edges)), tuple(np.array(edges).T)), shape=(n, n)).tocsr()
    count, component = connected_components(graph, directed=True, connection="weak")
    for label in range(count):  # each group of linked clips alone: a smaller problem each
        members = np.flatnonzero(component == label)
        if len(members) < 2:
            continue
        local = {int(m): k for k, m in enumerate(members)}
        inside = [(local[a], local[b]) for a, b in edges if a in local]
        edited[members] = _project(edited[members], inside)
    return edited


def poise(clips: Sequence[Clip], pairs: Sequence[Pair]) -> PoiseResult:
    """Edit the clips' scores, per instruction, so that no enforced pair is reversed; report before and after."""
    by_id = check_pairs(clips, pairs)
    groups: Dict[str, List[Clip]] = {}
    for clip in clips:
        groups.setdefault(clip.instruction, []).append(clip)
    pairs_of: Dict[str, List[Pair]] = {}
    for pair in pairs:
        pairs_of.setdefault(by_id[pair.preferred].instruction, []).append(pair)
    original = {c.id: c.score for c in clips}
    edited = dict(original)
    reports = []
    for instruction, members in groups.items():
        ids = [c.id for c in members]
        scores = np.array([c.score for c in members], dtype=float)
        own = pairs_of.get(instruction, [])
        order = consistent_order(ids, scores, own)
        new = edit_scores(scores, order.enforced)
        edited.update(zip(ids, (float(v) for v in new)))
        change = np.abs(new - scores)
        scale = max(1.0, float(np.abs(scores).max()))
        reports.append(InstructionReport(
            instruction, len(members), len(own), count_reversals(own, original), count_reversals(own, edited),
            count_reversals(order.enforced_pairs, original), count_reversals(order.enforced_pairs, edited),
            [[ids[k] for k in cycle] for cycle in order.cycles], order.cyclic_pairs, order.set_aside,
            int((change > 1e-12 * scale).sum()), float(change.sum())))
    return PoiseResult(list(clips), edited, reports)


# -- the printout ----------------------------------------------------------------------------------

def _share(counts: Counts) -> str:
    return f"{counts.reversed} ({100.0 * counts.reversed / counts.total:.1f}%)" if counts.total else "0"


def format_table(result: PoiseResult, width: int = 32) -> str:
    """Return the before/after table, one row per instruction and one for all, then the cycles."""
    header = ("instruction", "clips", "pairs", "reversed before", "reversed after", "consistent order",
              "in cycles", "set aside", "tied after", "edited", "mean |edit|")
    rows = []
    for r in result.reports + [result.total()]:
        name = r.instruction if len(r.instruction) <= width else r.instruction[:width - 3] + "..."
        rows.append((name, str(r.clips), str(r.pairs), _share(r.before), _share(r.after),
                     f"{r.consistent_before.reversed} -> {r.consistent_after.reversed}",
                     str(r.cyclic_pairs), str(len(r.set_aside)), str(r.after.tied), str(r.edited),
                     f"{r.abs_edit / r.clips:.4f}" if r.clips else "0"))
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [line(header), line(["-" * w for w in widths])] + [line(row) for row in rows[:-1]]
    lines += [line(["-" * w for w in widths]), line(rows[-1])]
    lines.append("reversed: the preferred clip scores lower (a tie is not a reversal). consistent order: the "
                 "pairs enforced, i.e. all but those set aside from cycles.")
    for r in result.reports:
        for cycle in r.cycles:
            lines.append(f"cycle in {r.instruction!r}: {', '.join(cycle)} (ranked by net wins, then score)")
        for pair in r.set_aside:
            status = ("still reversed" if result.scores[pair.preferred] < result.scores[pair.other]
                      else "tied" if result.scores[pair.preferred] == result.scores[pair.other] else "agrees")
            lines.append(f"  set aside: {pair.preferred} > {pair.other} ({status} after editing)")
    return "\n".join(lines)


# -- fine-tuning labels ------------------------------------------------------------------------------

def read_clip_scores(path: str) -> List[Clip]:
    """Read a scores file (``robo-reward poise --out``) for ``finetune --clip-scores``: progress in [0, 1]."""
    clips = read_clips(path)
    check_pairs(clips, [])
    for clip in clips:
        if not 0.0 <= clip.score <= 1.0:
            raise ValueError(f"{clip.where}: clip {clip.id!r} scores {clip.score}; finetune takes progress "
                             "in [0, 1] (map another scale first, e.g. (score - 1) / 4 for 1-5)")
    return clips


def _same_instruction(first: str, second: str) -> bool:
    return " ".join(first.lower().split()) == " ".join(second.lower().split())


def _end_progress_at(stage, score: float) -> None:
    """Make the stage's progress labels end at ``score``: its curve scaled, or a rise from 0 in time."""
    if stage.progress is not None and stage.progress[-1] > 0:
        stage.progress = np.clip(stage.progress * (score / stage.progress[-1]), 0.0, 1.0).astype(np.float32)
        return
    stamps = np.array([f.stamp for f in stage.frames], dtype=float)
    span = stamps[-1] - stamps[0]
    share = (stamps - stamps[0]) / span if span > 0 else np.linspace(0.0, 1.0, len(stamps))
    stage.progress = (score * share).astype(np.float32)
    if stage.success is None:  # a failed or partial episode: it never succeeded
        stage.success = np.zeros(len(stage.frames), dtype=bool)


def apply_clip_scores(episodes: Sequence[Any], clips: Sequence[Clip], log=print) -> int:
    """Make the progress labels of each scored episode (clip id = episode name) end at the clip's score.

    The stage whose instruction is the clip's gets it: a labelled curve is scaled to end there, a
    stage without progress labels (a failed or partial episode) gets a rise from 0 to the score over
    time and success 0. Return the number of episodes changed; raise ValueError when no clip names
    an episode, a name is ambiguous, or the instructions differ.
    """
    by_name: Dict[str, List[Any]] = {}
    for episode in episodes:
        by_name.setdefault(episode.name, []).append(episode)
    unmatched, changed = [], 0
    for clip in clips:
        found = by_name.get(clip.id, [])
        if not found:
            unmatched.append(clip.id)
            continue
        if len(found) > 1:
            raise ValueError(f"clip {clip.id!r}: {len(found)} episodes have that name "
                             f"({', '.join(e.bag for e in found)}); the scores cannot say which")
        episode = found[0]
        stages = [s for s in episode.stages if _same_instruction(s.instruction, clip.instruction)]
        if not stages:
            raise ValueError(f"{clip.where}: clip {clip.id!r} is scored for {clip.instruction!r}, but episode "
                             f"{episode.name} ({episode.bag}) is {[s.instruction for s in episode.stages]}")
        for stage in stages:
            _end_progress_at(stage, clip.score)
        changed += 1
    if not changed:
        raise ValueError(f"no scored clip names a training episode (clip ids are episode names; "
                         f"first ids: {', '.join(unmatched[:3])})")
    if unmatched:
        log(f"finetune: {len(unmatched)} scored clip(s) name no training episode: {', '.join(unmatched[:10])}")
    return changed
