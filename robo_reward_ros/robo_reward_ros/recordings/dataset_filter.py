# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward filter``: a ranking's chosen spans written out as a dataset, with the record of the choice.

The selection (span_selection), the writers (dataset_subset for LeRobot v3, dataset_subset_bags
for bag folders) and the manifest meet here. Where the work runs is passed in: the writers'
independent parts (a LeRobot episode's video segments, a span's bag) go through a runner that
yields results in the order given, so the Ray runner (replay/ray_filter.py) and this process give
the same files.
"""
from __future__ import annotations

import csv
import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

from robo_reward_ros.recordings.span_selection import (
    RankedSpan, RankingError, Selection, SelectionRule, check_sources, read_ranking, select)

TASK_SOURCES = ("dataset", "ranking")  # the task a kept LeRobot episode's rows get
MANIFEST_COLUMNS = ("row", "status", "output", "reason", "source", "kind", "episode", "instruction", "start_frame",
                    "end_frame", "start_time", "end_time", "score", "rank", "ranked_by")


def run_bag_jobs_here(jobs):
    """Write the span bags one after another in this process, yielding each as it is done (in order)."""
    from robo_reward_ros.recordings.dataset_subset_bags import write_bag_span
    for job in jobs:
        yield job, write_bag_span(job)


def filter_ranking(ranking: str, out_dir: str, rule: SelectionRule, task_from: str = "dataset",
                   crf: Optional[int] = None, camera_topic: str = "", context_topics: Sequence[str] = (),
                   progress_bar: bool = True, segment_runner=None, bag_runner=None) -> Dict[str, object]:
    """Select spans of ``ranking`` by ``rule`` and write them to ``out_dir`` with ``manifest.json``/``.csv``."""
    if task_from not in TASK_SOURCES:
        raise ValueError(f"--task-from must be one of {', '.join(TASK_SOURCES)}, not {task_from!r}")
    if os.path.lexists(out_dir):
        raise FileExistsError(f"{out_dir} exists: choose a new folder for the filtered output")
    spans = read_ranking(ranking)
    if not spans:
        raise RankingError(f"{ranking}: the ranking has no rows")
    selection = select(spans, rule)
    kind = check_sources(selection.kept)
    groups = _group(selection.kept, separate_instructions=kind == "lerobot" and task_from == "ranking")
    if kind == "lerobot":
        outputs, summary = _write_lerobot(groups, out_dir, task_from, crf, progress_bar, segment_runner)
    else:
        outputs, summary = _write_bags(groups, out_dir, camera_topic, tuple(context_topics), progress_bar,
                                       bag_runner)
    manifest = _manifest(ranking, out_dir, kind, selection, groups, outputs, task_from, len(spans))
    with open(os.path.join(out_dir, "manifest.json"), "w") as handle:
        json.dump(manifest, handle, indent=2, ensure_ascii=False)
    _write_manifest_csv(os.path.join(out_dir, "manifest.csv"), selection, groups, outputs)
    return {"kind": kind, "out": out_dir, "kept_rows": len(selection.kept), "left_out_rows": len(selection.left_out),
            "outputs": len(groups), **summary}


Group = Tuple[Tuple[str, str, int, int, str], List[RankedSpan]]


def _group(kept: Sequence[RankedSpan], separate_instructions: bool) -> List[Group]:
    """Return the distinct spans to write, in source order; one span picked for two instructions is written once.

    With the ranking's instruction as the task, each (span, instruction) is its own episode.
    """
    found: Dict[Tuple[str, str, int, int, str], List[RankedSpan]] = {}
    for span in kept:
        key = span.key() + ((span.instruction if separate_instructions else ""),)
        found.setdefault(key, []).append(span)

    def order(item):
        (source, episode, start, end, instruction), _ = item
        number = int(episode) if episode.isdigit() else -1
        return (source, number, episode, start, end, instruction)

    return sorted(found.items(), key=order)


def _write_lerobot(groups: Sequence[Group], out_dir: str, task_from: str, crf: Optional[int],
                   progress_bar: bool, segment_runner) -> Tuple[List[object], Dict[str, object]]:
    from tqdm import tqdm
    from robo_reward_ros.recordings.dataset_subset import EpisodePlan, open_sources, run_segments_here, write_subset
    plans = []
    for new_index, ((source, episode, start, end, _), spans) in enumerate(groups):
        if not episode.isdigit():
            raise RankingError(f"{source}: episode {episode!r} is not a LeRobot episode index")
        task = spans[0].instruction if task_from == "ranking" else None
        plans.append(EpisodePlan(new_index, source, int(episode), start, end, task))
    folders = open_sources(plan.source for plan in plans)
    with tqdm(total=len(plans), unit="episode", desc="filter", disable=not progress_bar) as bar:
        written = write_subset(folders, plans, out_dir, segment_runner or run_segments_here, crf,
                               on_episode=lambda plan: bar.update(1))
    return list(range(len(plans))), {"episodes": written["episodes"], "frames": written["frames"],
                                     "tasks": len(written["tasks"])}


def _write_bags(groups: Sequence[Group], out_dir: str, camera_topic: str, context_topics: Tuple[str, ...],
                progress_bar: bool, bag_runner) -> Tuple[List[object], Dict[str, object]]:
    from tqdm import tqdm
    from robo_reward_ros.recordings.dataset_subset_bags import BagSpanJob, find_bag, frame_count, span_bag_name
    jobs, names = [], set()
    for (source, episode, start, end, _), _spans in groups:
        bag = find_bag(source, episode)
        whole = start == 0 and end == frame_count(bag, camera_topic)
        name = span_bag_name(episode, start, end, whole)
        while name in names:  # two sources with an episode of one name
            name += "_"
        names.add(name)
        jobs.append(BagSpanJob(bag, os.path.join(out_dir, name), start, end, camera_topic, context_topics))
    os.makedirs(out_dir)
    results = []
    try:
        with tqdm(total=len(jobs), unit="span", desc="filter", disable=not progress_bar) as bar:
            for job, result in (bag_runner or run_bag_jobs_here)(jobs):
                results.append(result)
                bar.update(1)
    except BaseException:
        import shutil
        shutil.rmtree(out_dir, ignore_errors=True)
        raise
    outputs = [os.path.basename(job.out) for job in jobs]
    return outputs, {"bags": len(jobs), "frames": sum(int(r["frames"]) for r in results),
                     "written": results}


def _reason_kept(span: RankedSpan, rule: SelectionRule) -> str:
    return f"rank {span.rank} for this instruction; kept by: {rule.text()}"


def _manifest(ranking: str, out_dir: str, kind: str, selection: Selection, groups: Sequence[Group],
              outputs: Sequence[object], task_from: str, rows: int) -> Dict[str, object]:
    kept = []
    for ((source, episode, start, end, _), spans), output in zip(groups, outputs):
        entry = {("episode_index" if kind == "lerobot" else "bag"): output, "source": source, "episode": episode,
                 "start_frame": start, "end_frame": end, "frames": end - start,
                 "chosen_for": [{**span.describe(), "reason": _reason_kept(span, selection.rule)} for span in spans]}
        if kind == "lerobot":
            entry["task"] = spans[0].instruction if task_from == "ranking" else "(the source episode's own)"
        kept.append(entry)
    return {"ranking": os.path.abspath(ranking), "output": os.path.abspath(out_dir), "kind": kind,
            "rule": selection.rule.describe(), "rule_text": selection.rule.text(),
            **({"task_from": task_from} if kind == "lerobot" else {}),
            "counts": {"ranking_rows": rows, "kept_rows": len(selection.kept),
                       "left_out_rows": len(selection.left_out), "outputs": len(groups)},
            "kept": kept,
            "left_out": [{**span.describe(), "reason": reason} for span, reason in selection.left_out]}


def _write_manifest_csv(path: str, selection: Selection, groups: Sequence[Group], outputs: Sequence[object]) -> None:
    output_of: Dict[int, object] = {}
    for (_, spans), output in zip(groups, outputs):
        for span in spans:
            output_of[span.row] = output
    rows = [(span, "kept", output_of[span.row], _reason_kept(span, selection.rule)) for span in selection.kept]
    rows += [(span, "left_out", "", reason) for span, reason in selection.left_out]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=MANIFEST_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for span, status, output, reason in sorted(rows, key=lambda item: item[0].row):
            values = span.describe()
            writer.writerow({**values, "status": status, "output": output, "reason": reason})
