# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The model-vs-operator agreement as a person reads it: an aligned text table, Markdown and JSON files.

The numbers come from ``operator_agreement.py``; this only lays them out.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

COLUMNS = ("TP", "FP", "FN", "TN", "unlabelled")


def _f(value: Optional[float], digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _share(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{100.0 * value:.1f} %"


def _aligned(rows: Sequence[Sequence[str]], left: int = 1) -> List[str]:
    """Return the rows as lines, a rule under the first; the first ``left`` columns left-aligned, the rest right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i < left else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _decision_row(name: str, entry: Dict[str, Any]) -> Tuple[str, ...]:
    counts = entry.get("counts", entry)
    return (name,) + tuple(str(counts[k.lower()]) for k in COLUMNS) + (
        _f(entry["precision"]), _f(entry["recall"]), _f(entry["f1"]))


def _sources(pooled: Dict[str, Any]) -> str:
    parts = []
    for name, entry in pooled["labels_by_source"].items():
        said = [f"{entry[k]} {k}" for k in ("applied", "late", "refused") if entry[k]]
        parts.append(f"{name} ({', '.join(said)})")
    return "; ".join(parts) or "none"


def _alarms(alarms: Dict[str, Any]) -> str:
    text = f"{alarms['dismissed']} of {alarms['alerts']} task-failure alert(s) dismissed ({_share(alarms['share'])})"
    kinds = [f"{kind} {e['dismissed']}/{e['alerts']}" for kind, e in alarms["by_kind"].items()]
    return text + (": " + ", ".join(kinds) if kinds else "")


def summary_lines(pooled: Dict[str, Any]) -> List[Tuple[str, str]]:
    """Return (name, value) of the pooled numbers beside the confusion counts."""
    vetoes, takeovers = pooled["vetoes"], pooled["takeovers"]
    per_hour = "n/a" if vetoes["per_hour"] is None else f"{vetoes['per_hour']:.1f}"
    return [
        ("vetoes", f"{vetoes['total']} ({vetoes['applied']} applied, {vetoes['late']} late), "
                   f"{per_hour} per hour of episode time"),
        ("false alarms", _alarms(pooled["false_alarms"])),
        ("takeovers", f"{takeovers['count']} in {pooled['episodes']} episode(s) "
                      f"({_f(takeovers['per_episode'], 2)} per episode), {takeovers['seconds']:.1f} s "
                      f"under a takeover ({_share(takeovers['share'])} of episode time)"),
        ("refused inputs", str(pooled["refused"])),
        ("late labels not scored", str(pooled["unscored_late_labels"])),
        ("labels by source", _sources(pooled)),
    ]


EPISODE_COLUMNS = ("episode", "status", "decided by", "time") + COLUMNS + (
    "vetoes", "takeovers", "dismissed", "refused")


def _episode_rows(result: Dict[str, Any]) -> List[Tuple[str, ...]]:
    rows = [EPISODE_COLUMNS]
    for e in result["episodes"]:
        rows.append((e["episode_id"], e["status"], e["decided_by"] or "-", f"{e['duration_s']:.1f} s")
                    + tuple(str(e["counts"][k.lower()]) for k in COLUMNS)
                    + (str(e["vetoes"]["applied"] + e["vetoes"]["late"]),
                       f"{e['takeovers']} ({e['takeover_s']:.1f} s)",
                       f"{len(e['dismissed'])}/{len(e['alerts'])}", str(e["refused"])))
    return rows


def _notes(result: Dict[str, Any]) -> List[str]:
    notes = list(result["notes"])
    notes += [f"{e['episode_id']}: {note}" for e in result["episodes"] for note in e["notes"]]
    return notes


def agreement_table(result: Dict[str, Any]) -> str:
    """Return the plain-text report: decisions per stage and pooled, the operator's numbers, one row per episode."""
    pooled = result["pooled"]
    hours = pooled["episode_s"] / 3600.0
    lines = [f"Model success decisions against the operator: {pooled['episodes']} episode(s), "
             f"{pooled['episode_s']:.1f} s ({hours:.2f} h) of episode time", ""]
    header = ("stage",) + COLUMNS + ("precision", "recall", "F1")
    rows = [header] + [_decision_row(stage, entry) for stage, entry in pooled["by_stage"].items()]
    rows.append(_decision_row("all", pooled))
    lines += _aligned(rows) + [""]
    names = summary_lines(pooled)
    width = max(len(name) for name, _ in names)
    lines += [f"{name.ljust(width)}  {value}" for name, value in names] + [""]
    lines += _aligned(_episode_rows(result), left=4)
    notes = _notes(result)
    if notes:
        lines += [""] + [f"note: {note}" for note in notes]
    return "\n".join(lines)


def _markdown_table(rows: Sequence[Sequence[str]]) -> List[str]:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return lines + ["| " + " | ".join(row) + " |" for row in rows[1:]]


def agreement_markdown(result: Dict[str, Any]) -> str:
    """Return the report as Markdown, with the rules' pointer."""
    pooled = result["pooled"]
    lines = ["# Reward model against the operator", "",
             f"Episode logs: {', '.join(f'`{f}`' for f in result['folders'])}; {pooled['episodes']} "
             f"episode(s), {pooled['episode_s']:.1f} s of episode time. A model success decision is "
             "a true positive when the operator confirmed it, a false positive when vetoed; the "
             "rules are in docs/operator-loop.md (\"Agreement with the operator\").", "",
             "## Success decisions", ""]
    header = ("stage",) + COLUMNS + ("precision", "recall", "F1")
    rows = [header] + [_decision_row(stage, entry) for stage, entry in pooled["by_stage"].items()]
    lines += _markdown_table(rows + [_decision_row("all", pooled)]) + ["", "## The operator", ""]
    lines += _markdown_table([("what", "value")] + summary_lines(pooled))
    lines += ["", "## Episodes", ""] + _markdown_table(_episode_rows(result))
    notes = _notes(result)
    if notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def write_agreement_reports(result: Dict[str, Any], out: str) -> Tuple[str, str]:
    """Write ``operator_agreement.json`` and ``operator_agreement.md`` into ``out``; return their paths."""
    os.makedirs(out, exist_ok=True)
    json_path = os.path.join(out, "operator_agreement.json")
    md_path = os.path.join(out, "operator_agreement.md")
    with open(json_path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    with open(md_path, "w", encoding="utf-8") as handle:
        handle.write(agreement_markdown(result))
    return json_path, md_path
