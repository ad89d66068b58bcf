# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The evaluation report as Markdown (the JSON report is the metrics dict itself)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence


def _f(value, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _summary(entry: Dict[str, Any]) -> str:
    if entry.get("mean") is None:
        return "n/a"
    return f"{entry['mean']:.3f} (min {entry['min']:.3f}, max {entry['max']:.3f}, {entry['n']} task(s))"


def _detection(entry: Dict[str, Any]) -> str:
    return (f"P {_f(entry['precision'])} / R {_f(entry['recall'])} / F1 {_f(entry['f1'])} "
            f"(TP {entry['tp']}, FP {entry['fp']}, FN {entry['fn']}, TN {entry['tn']})")


def _delay(entry: Dict[str, Any]) -> str:
    if not entry["n"]:
        return "n/a"
    return (f"mean {entry['mean']:.2f} s, median {entry['median']:.2f} s, max {entry['max']:.2f} s"
            f" ({entry['n']} detection(s), {entry['early']} before the onset)")


def _consistency(entry: Optional[Dict[str, Any]]) -> str:
    if not entry:
        return "n/a"
    return f"{_f(entry['consistency'])} ({entry['judged']} pairs, {entry['ties']} tied)"


def metrics_table(result: Dict[str, Any]) -> str:
    rows = [
        ("VOC, Pearson to the progress label (successful episodes)",
         _f(result["voc_pearson_successful"])),
        ("VOC, Spearman with time (successful episodes)",
         _f(result["voc_spearman_time_successful"])),
        ("Kendall tau_a across outcome quality (per task, averaged)",
         _summary(result["kendall_tau_a"])),
        ("success - failure difference of trajectory reward", _summary(result["success_failure_diff"])),
        ("success - partial difference", _summary(result["success_partial_diff"])),
        ("partial - failure difference", _summary(result["partial_failure_diff"])),
        ("binned MAE, 1-5 scale", _f(result.get("binned_mae_1_5"))),
        ("mean abs(trajectory reward - partial success)", _f(result.get("partial_success_abs_delta"))),
        ("preference accuracy (pairwise answer vs the outcomes)",
         f"{_f(result['preference_accuracy'])} ({result['preference_pairs']} pairs)"
         if "preference_accuracy" in result else "n/a"),
        ("score-pair consistency (pairwise answer vs the model's own scores)",
         _consistency(result.get("score_pair_consistency"))),
        ("success detection", _detection(result["success_detection"])),
        ("success detection delay", _delay(result["success_detection_delay_s"])),
        ("failure detection (success vs failure episodes)", _detection(result["failure_detection"])),
        ("failure detection delay", _delay(result["failure_detection_delay_s"])),
    ]
    lines = ["| metric | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


def episodes_table(rows: Sequence[Dict[str, Any]]) -> str:
    lines = ["| episode | task | truth | estimates | trajectory reward | partial success | "
             "VOC Pearson | VOC Spearman | success declared at (truth) | first failure (truth onset) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        truth = r["outcome"] or "unknown"
        if r.get("failure_kind"):
            truth += f" ({r['failure_kind']})"
        declared = ("-" if r["detected_success_stamp"] is None
                    else f"{_f(r['detected_success_stamp'], 1)} s")
        success = (f"{declared} ({_f(r['gt_success_stamp'], 1)} s)"
                   if r["gt_success_stamp"] is not None else declared)
        failure = (f"{r['first_failure_kind']} {_f(r['first_failure_stamp'], 1)} s"
                   if r["first_failure_kind"] else "-")
        if r["gt_failure_stamp"] is not None:
            failure += f" ({_f(r['gt_failure_stamp'], 1)} s)"
        lines.append(f"| {r['name']} | {r['task']} | {truth} | {r['estimates']} | "
                     f"{_f(r['trajectory_reward'])} | {_f(r['partial_success'])} | "
                     f"{_f(r['voc_pearson'])} | {_f(r['voc_spearman_time'])} | {success} | {failure} |")
    return "\n".join(lines)


DECISION_COLUMNS = ("episode", "truth", "node's decision", "detection delay", "final progress")


def truth_text(row: Dict[str, Any]) -> str:
    """Return the episode's true outcome, with the kind of failure when known."""
    truth = row.get("outcome") or "unknown"
    return f"{truth} ({row['failure_kind']})" if row.get("failure_kind") else truth


def decision_text(row: Dict[str, Any]) -> str:
    """Return what the node declared: success and/or its first task failure, with their episode times."""
    parts = []
    if row.get("detected_success_stamp") is not None:
        parts.append(f"success at {row['detected_success_stamp']:.1f} s")
    if row.get("first_failure_kind"):
        parts.append(f"{row['first_failure_kind']} at {row['first_failure_stamp']:.1f} s")
    return ", ".join(parts) or "none"


def delay_text(row: Dict[str, Any]) -> str:
    """Return the delay eval counts for this episode: of the success for a success, of the failure for a failure."""
    from robo_reward_ros.evaluation.scoring import failure_delay, success_delay
    delay = {"success": success_delay, "failure": failure_delay}.get(row.get("outcome") or "")
    value = delay(row) if delay else None
    if value is None:
        return "n/a"
    return f"{value:+.2f} s" + (" (early)" if value < 0 else "")


def decisions_table(rows: Sequence[Dict[str, Any]]) -> str:
    """Plain-text table, one row per episode of ``scoring.episode_rows``: truth, decision, delay, final progress."""
    table = [DECISION_COLUMNS] + [
        (r["name"], truth_text(r), decision_text(r), delay_text(r), _f(r.get("final_progress")))
        for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(DECISION_COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip()
             for line in table]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def markdown_report(result: Dict[str, Any], rows: List[Dict[str, Any]], info: Dict[str, Any],
                    plots: Sequence[str] = ()) -> str:
    model = info.get("model", "?")
    lines = ["# Reward model evaluation", ""]
    if info.get("tiny_random_model"):
        lines += ["**The model is a tiny checkpoint with random weights**: these numbers test "
                  "the evaluation, not a reward model.", ""]
    lines += [f"Model `{model}` ({info.get('backend', '?')}, {info.get('precision', '?')}); "
              f"{result['episodes']} episode(s), {result['episodes_with_outcome']} with a known "
              f"outcome; node parameters changed: {info.get('parameters') or 'none'}.",
              "Definitions: docs/offline-evaluation.md.", "", metrics_table(result), "",
              "## Episodes", "", episodes_table(rows), ""]
    for plot in plots:
        lines += [f"![summary]({plot})", ""]
    return "\n".join(lines)
