# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Score whole episodes, or windows of them, against instructions: what ``rank`` and ``eval --confusion`` run.

The model is the offline tools' (``offline_parameter_values``: the demo preset unless told
otherwise). Episodes are listed as references and stream one at a time through the scorer of
replay/episode_scoring.py, here or on Ray workers (replay/ray_ranking.py), so memory holds the
open windows and the model, never a dataset; only the score rows are gathered and ranked.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from robo_reward_ros.recordings.episode_sources import EpisodeReader, EpisodeRef, SourceOptions
from robo_reward_ros.replay.episode_scoring import EpisodeScorer, RankJob, ScoredSet, episode_error


def score_episodes(values: Dict[str, Any], refs: Sequence[EpisodeRef], job: RankJob, ray=None,
                   progress_bar: bool = True, log=print, model=None) -> ScoredSet:
    """Score every episode in this process or on Ray (``ray``: RayOptions); rows in episode order.

    An episode that cannot be read is reported in ``errors`` and the others go on.
    """
    if not refs:
        raise ValueError("no episodes to score")
    if ray is not None:
        from robo_reward_ros.replay.ray_ranking import score_on_ray
        return score_on_ray(values, refs, job, ray, progress_bar, log)
    from tqdm import tqdm
    scorer = EpisodeScorer(values, job, model, log)
    done = ScoredSet([], [], len(refs))
    try:
        for ref in tqdm(refs, unit="episode", desc="episodes", disable=not progress_bar):
            try:
                done.rows += scorer.score(ref)
            except (ValueError, RuntimeError, OSError) as exc:
                done.errors.append(episode_error(ref, exc))
    finally:
        scorer.close()
    return done


def model_values(model: str = "", backend: str = "", precision: str = "", device: str = "cpu",
                 params: Sequence[str] = (), log=print):
    """Return the node parameters naming the model (the replay's choice rules) and its description."""
    from robo_reward_ros.replay.offline_replay import model_info, offline_parameter_values
    values, tiny = offline_parameter_values(model, backend, precision, device, params, log)
    return values, model_info(values, tiny)


def run_rank(paths: Sequence[str], out: str, by: str = "final_progress", instructions: Sequence[str] = (),
             window: int = 0, stride: int = 0, reference: str = "", reference_episode: Optional[int] = None,
             sources: SourceOptions = SourceOptions(), model: str = "", backend: str = "", precision: str = "",
             device: str = "cpu", params: Sequence[str] = (), ray=None, progress_bar: bool = True,
             log=print) -> Dict[str, Any]:
    """Score and rank; write the table to ``out`` (.parquet or .csv). Returns a summary."""
    from robo_reward_ros.evaluation.ranking import RANK_BY, SpanCutter, rank_rows, table_format, write_table
    from robo_reward_ros.recordings.episode_sources import list_episodes, parse_reference
    if by not in RANK_BY:
        raise ValueError(f"--by {by}: unknown ranking (choose from {', '.join(RANK_BY)})")
    table_format(out)
    SpanCutter(window, stride)  # the span options, checked before anything loads
    if by == "preference" and not reference:
        raise ValueError("--by preference needs --reference CLIP (a bag, or a LeRobot dataset with "
                         "--reference-episode N): the model says how likely each span beats it")
    if any(not text.strip() for text in instructions):
        raise ValueError("--instruction must not be empty")
    job = RankJob(tuple(dict.fromkeys(instructions)), window, stride, by == "preference",
                  parse_reference(reference, reference_episode) if reference else None, sources,
                  need_success=by == "success")
    refs = list_episodes(paths)
    check_camera_key(refs, sources)
    values, info = model_values(model, backend, precision, device, params, log)
    scored = score_episodes(values, refs, job, ray, progress_bar, log)
    ranked = rank_rows(scored.rows, by)
    write_table(ranked, out)
    return {"out": out, "episodes": len(refs), "rows": len(ranked), "errors": scored.errors,
            "instructions": len({r["instruction"] for r in ranked}), "model": info["model_description"],
            "ranked": ranked}


def check_camera_key(refs: Sequence[EpisodeRef], sources: SourceOptions) -> None:
    """Refuse once, before any scoring, a --camera-key that a LeRobot dataset lacks (not once per episode)."""
    reader = EpisodeReader(sources)
    for root in dict.fromkeys(ref.source for ref in refs if ref.kind == "lerobot"):
        reader.dataset(root)


FLOOR_NONE = "none"
FLOOR_TINY = "tiny-random"


def floor_model(main_values: Dict[str, Any], choice: str, log=print) -> Tuple[Optional[str], str, str]:
    """Return (checkpoint, backend, why) of the random floor model; checkpoint None when there is none.

    ``tiny-random`` (the default) is a random-weight checkpoint of the main model's backend, built
    offline once into the cache the way the tests build theirs; a plugin or remote backend has none.
    """
    if choice in ("", FLOOR_NONE):
        return None, "", "no floor asked for (--floor-model none)"
    from robo_reward_ros.settings.node_settings import model_settings
    backend = model_settings(main_values).backend
    if choice != FLOOR_TINY:  # the main model's backend where it is a built-in one, else recognised
        built_in = backend in ("robometer", "roboreward", "topreward")
        return choice, backend if built_in else "", f"--floor-model {choice}"
    layouts = {"auto": "robometer", "robometer": "robometer", "roboreward": "roboreward", "topreward": "qwen3vl"}
    if backend not in layouts:
        return None, backend, (f"no tiny random checkpoint is built for the {backend} backend (only robometer, "
                               f"roboreward, topreward); give --floor-model DIR")
    if layouts[backend] == "robometer":
        from robo_reward_ros.simulation.demo_assets import demo_checkpoint
        return demo_checkpoint(log), "robometer", "a tiny random-weight robometer checkpoint, built offline"
    from robo_reward_ros.models.loading.bundled_demo import building, cache_dir
    path = os.path.join(cache_dir(), f"{layouts[backend]}-tiny-random")
    with building(path):
        if not os.path.isfile(os.path.join(path, "config.json")):
            from robo_reward_ros.models.testing.tiny_checkpoints import build_checkpoint
            log(f"building a tiny offline {layouts[backend]} checkpoint in {path} ...")
            build_checkpoint(layouts[backend], path)
    return path, backend, f"a tiny random-weight {backend} checkpoint, built offline"


def run_confusion(paths: Sequence[str], out: str, sources: SourceOptions = SourceOptions(), model: str = "",
                  backend: str = "", precision: str = "", device: str = "cpu", params: Sequence[str] = (),
                  floor: str = FLOOR_TINY, ray=None, progress_bar: bool = True, log=print) -> Dict[str, Any]:
    """Score every episode against every distinct instruction (the model's, then the floor's); write the matrix."""
    import json
    from robo_reward_ros.evaluation.confusion import (MATRIX_COLUMNS, diagonal_mean, grouped_matrix, matrix_rows,
                                                      plot_confusion)
    from robo_reward_ros.evaluation.ranking import write_table
    from robo_reward_ros.recordings.episode_sources import list_episodes
    refs = list_episodes(paths)
    check_camera_key(refs, sources)
    reader = EpisodeReader(sources)
    own: Dict[EpisodeRef, str] = {}
    errors: List[str] = []
    for ref in refs:
        try:
            own[ref] = reader.instruction(ref)
        except (ValueError, RuntimeError, OSError) as exc:
            errors.append(episode_error(ref, exc))
    instructions = tuple(dict.fromkeys(own[ref] for ref in refs if ref in own))
    if len(instructions) < 2:
        raise ValueError(f"the confusion matrix needs episodes of at least 2 different instructions; "
                         f"{len(own)} episode(s) with {len(instructions)}")
    refs = [ref for ref in refs if ref in own]
    job = RankJob(instructions, sources=sources)
    values, info = model_values(model, backend, precision, device, params, log)
    panels, table, summary = [], [], {"out": out, "episodes": len(refs), "instructions": list(instructions),
                                      "chance": 1.0 / len(instructions), "errors": errors}
    runs = [("model", values, info["model_description"], _short(info))]
    checkpoint, floor_backend, why = floor_model(values, floor, log)
    if checkpoint is not None:
        floor_values, floor_info = model_values(checkpoint, floor_backend, "fp32", device, params, log)
        runs.append(("floor", floor_values, f"{floor_info['model_description'].split(' - ')[0]} ({why})",
                     _short(floor_info)))
    summary["floor_note"] = why
    scored_runs = []
    with _one_ray_runtime(ray, log):  # the model's and the floor's runs share one runtime (Ray starts once)
        for label, run_values, description, short in runs:
            scored_runs.append(score_episodes(run_values, refs, job, ray, progress_bar, log))
    for (label, run_values, description, short), scored in zip(runs, scored_runs):
        summary["errors"] += scored.errors if label == "model" else []
        # An instruction whose every episode failed to read has no row: its column goes too.
        present = {row["own_instruction"] for row in scored.rows}
        names, counts, matrix = grouped_matrix([r for r in scored.rows if r["instruction"] in present])
        if len(names) < 2:
            raise ValueError(f"{label}: fewer than 2 instructions have scored episodes")
        summary[label] = {"description": description, "diagonal_mean": diagonal_mean(matrix),
                          "episodes_per_instruction": dict(zip(names, counts))}
        panels.append((f"{label}: {short}", matrix))
        table += matrix_rows(label, names, counts, matrix)
        write_table([{**r, "model": label} for r in scored.rows], os.path.join(out, f"confusion_{label}_episodes.csv"),
                    EPISODE_COLUMNS)
        summary.setdefault("matrix_instructions", names)
    os.makedirs(out, exist_ok=True)
    summary["table"] = write_table(table, os.path.join(out, "confusion.csv"), MATRIX_COLUMNS)
    try:
        summary["parquet"] = write_table(table, os.path.join(out, "confusion.parquet"), MATRIX_COLUMNS)
    except RuntimeError:  # no pyarrow: the CSV holds the same
        pass
    summary["plot"] = plot_confusion(panels, summary["matrix_instructions"], os.path.join(out, "confusion.png"))
    with open(os.path.join(out, "confusion.json"), "w") as handle:
        json.dump({k: v for k, v in summary.items() if k != "table"}, handle, indent=1)
    return summary


def _one_ray_runtime(ray, log):
    """Return a context holding one Ray runtime for several runs (nothing without ``--ray``)."""
    import contextlib
    if ray is None:
        return contextlib.nullcontext()
    from robo_reward_ros.replay.ray_replay import ray_runtime
    return ray_runtime(ray, log)


def _short(info: Dict[str, Any]) -> str:
    """Name a model in a plot title: backend and the checkpoint folder's name."""
    return f"{info['backend']} {os.path.basename(str(info['model']).rstrip('/')) or info['model']}"


EPISODE_COLUMNS = (("model", str), ("source", str), ("kind", str), ("episode", str), ("own_instruction", str),
                   ("instruction", str), ("final_progress", float), ("progress_gain", float), ("success", float))
