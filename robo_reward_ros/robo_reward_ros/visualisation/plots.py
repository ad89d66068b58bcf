# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Plots of replays (matplotlib, no display needed): one figure per episode and a summary."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

EVENT_COLORS = {"stage_succeeded": "tab:green", "failure": "tab:red",
                "episode_ended": "tab:gray", "verifier": "tab:cyan"}
# Each failure kind its own colour and line, so a stall and low progress read apart in one plot.
FAILURE_STYLES = {"regression": ("tab:red", "-"), "stall": ("tab:purple", "--"),
                  "low_progress": ("tab:brown", "-."), "timeout": ("tab:gray", ":")}


def event_style(event: Dict[str, Any]):
    """Return the (colour, line style) of an event's marker."""
    if event["type"] == "failure":
        return FAILURE_STYLES.get(str(event.get("kind", "")).lower(), ("tab:red", (0, (1, 1))))
    return EVENT_COLORS[event["type"]], "-"


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_episode(summary: Dict[str, Any], estimates: Sequence[Dict[str, Any]],
                 events: Sequence[Dict[str, Any]], path: str, title_note: str = "",
                 live: Optional[Sequence[Dict[str, Any]]] = None) -> str:
    """Progress and success probability over time, ground truth when known, events marked.

    ``summary``/``estimates``/``events`` are the records of a replay folder (trace.py);
    ``live`` optionally overlays the live node's estimates of the same episode.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 3.4), dpi=100)
    stamps = summary.get("stamps") or []
    if summary.get("gt_progress"):
        ax.plot(stamps, summary["gt_progress"], color="black", lw=1.2, ls="--",
                label="truth: progress label")
        _shade(ax, stamps, summary["gt_success"], "truth: success")
        stages = summary.get("gt_stage") or []
        for index in range(1, len(stages)):
            if stages[index] != stages[index - 1]:
                ax.axvline(stamps[index], color="black", lw=0.8, ls=":")
    if summary.get("gt_failure_stamp") is not None:
        ax.axvline(summary["gt_failure_stamp"], color="tab:red", lw=1.0, ls=":",
                   label=f"truth: {summary.get('failure_kind') or 'failure'} onset")
    t = [e["stamp"] for e in estimates]
    ax.plot(t, [e["progress"] for e in estimates], color="tab:blue", marker=".", lw=1.5,
            label="progress")
    if any(e.get("success_prob") is not None for e in estimates):
        ax.plot(t, [e["success_prob"] if e.get("success_prob") is not None else float("nan")
                    for e in estimates], color="tab:orange", marker=".", lw=1.2,
                label="success probability")
    if live:
        ax.plot([e["stamp"] for e in live], [e["progress"] for e in live], color="tab:purple",
                lw=0, marker="x", ms=4, label="live node: progress")
    seen = set()
    for event in events:
        if event["type"] == "episode_ended" or (event["type"] == "failure"
                                                and not event.get("task_failure")):
            continue
        name = event["type"] if event["type"] != "failure" else f"failure: {event['kind']}"
        color, style = event_style(event)
        ax.axvline(event["stamp"], color=color, ls=style, lw=1.5,
                   label=name if name not in seen else None)
        seen.add(name)
    outcome = summary.get("outcome") or "unknown"
    ax.set_title(f"{summary['name']} (truth: {outcome}){title_note}", fontsize=9)
    ax.set_xlabel("time since the first frame (s)")
    ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6.5, loc="upper left", ncol=2, framealpha=0.8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _shade(ax, stamps: Sequence[float], flags: Sequence[bool], label: str) -> None:
    start = None
    labelled = False
    for index, flag in enumerate(list(flags) + [False]):
        if flag and start is None:
            start = stamps[index]
        elif not flag and start is not None:
            end = stamps[min(index, len(stamps) - 1)]
            ax.axvspan(start, end, color="tab:green", alpha=0.12,
                       label=None if labelled else label)
            labelled, start = True, None


def plot_summary(rows: List[Dict[str, Any]], path: str, title: str = "") -> str:
    """Left: final progress by ground-truth outcome, per task. Right: VOC per episode."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.6), dpi=100)
    order = ["failure", "partial", "success"]
    tasks = sorted({r["task"] for r in rows if r.get("outcome")})
    for offset, task in enumerate(tasks):
        for row in rows:
            if row["task"] != task or row.get("outcome") not in order \
                    or row.get("final_progress") is None:
                continue
            x = order.index(row["outcome"]) + (offset - (len(tasks) - 1) / 2) * 0.12
            left.scatter(x, row["final_progress"], color=f"C{offset}", s=18,
                         label=task if row is next(r for r in rows if r["task"] == task
                                                   and r.get("final_progress") is not None)
                         else None)
    left.set_xticks(range(len(order)), order)
    left.set_ylabel("final progress")
    left.set_ylim(-0.03, 1.03)
    left.set_title("trajectory reward by outcome", fontsize=9)
    if left.get_legend_handles_labels()[1]:  # no labelled point: no legend (and no warning)
        left.legend(fontsize=6.5)
    named = [r for r in rows if r.get("voc_pearson") is not None]
    right.barh([r["name"] for r in named], [r["voc_pearson"] for r in named], color="tab:blue",
               alpha=0.7, label="Pearson to truth")
    right.barh([r["name"] for r in named], [r["voc_spearman_time"] for r in named],
               color="none", edgecolor="tab:orange", label="Spearman with time")
    right.axvline(0, color="black", lw=0.8)
    right.set_xlim(-1, 1)
    right.tick_params(axis="y", labelsize=6.5)
    right.set_title("VOC per episode", fontsize=9)
    right.legend(fontsize=6.5)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
