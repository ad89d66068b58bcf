# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""POISE (``robo-reward poise``): scores edited along the preferences, and finetune training on them.

A constructed set with known conflicts: 5 reversed pairs, one of them in a cycle. After editing
no enforced pair is reversed, the cyclic pair is reported, clips no conflict reaches keep their
scores exactly, and the edited values are the least-squares ones worked out by hand. Then the
command in a subprocess, bad files, and finetune's progress targets taken from the edited file.
"""
import csv
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from ros_fixtures import PACKAGE_ROOT
from robo_reward_ros.training.poise import (Clip, Pair, count_reversals, poise, read_clips, read_pairs,
                                            write_clips)

CLIPS = {  # instruction -> {clip: score}
    "push the block right": {"p1": 0.9, "p2": 0.3, "p3": 0.6, "p4": 0.5, "p5": 0.2, "p6": 0.75, "p7": 0.1},
    "lift the green block": {"l1": 0.7, "l2": 0.5, "l3": 0.3, "l4": 0.4},
    "open the drawer": {"d1": 0.2, "d2": 0.8, "d3": 0.1, "dx": 0.45},
}
PAIRS = [  # (instruction, preferred, other)
    ("push the block right", "p2", "p1"),  # reversed
    ("push the block right", "p1", "p3"),
    ("push the block right", "p4", "p3"),  # reversed
    ("push the block right", "p3", "p7"),
    ("push the block right", "p5", "p7"),
    ("lift the green block", "l1", "l2"),  # l1 > l2 > l3 > l1: a cycle
    ("lift the green block", "l2", "l3"),
    ("lift the green block", "l3", "l1"),  # reversed, and against the cycle's ranking
    ("lift the green block", "l4", "l1"),  # reversed
    ("open the drawer", "d1", "d2"),  # reversed
    ("open the drawer", "d2", "d3"),
    ("open the drawer", "dx", "d3"),  # dx lies between d1's and d2's scores, in no conflict
]
# Least squares by hand: p1, p2 pool to 0.6; p3, p4 to 0.55; l4, l1 to 0.55; d1, d2 to 0.5.
EDITED = {"p1": 0.6, "p2": 0.6, "p3": 0.55, "p4": 0.55, "l1": 0.55, "l4": 0.55, "d1": 0.5, "d2": 0.5}
UNTOUCHED = ["p5", "p6", "p7", "l2", "l3", "d3", "dx"]


def _clips():
    return [Clip(clip, instruction, score) for instruction, scores in CLIPS.items() for clip, score in scores.items()]


def _pairs():
    return [Pair(instruction, preferred, other) for instruction, preferred, other in PAIRS]


def test_reversals_go_from_five_to_none_against_the_consistent_order():
    clips, pairs = _clips(), _pairs()
    original = {c.id: c.score for c in clips}
    assert count_reversals(pairs, original).reversed == 5
    result = poise(clips, pairs)
    total = result.total()
    assert (total.before.reversed, total.pairs, total.clips) == (5, 12, 15)
    assert (total.consistent_before.reversed, total.consistent_after.reversed) == (4, 0)
    # Against the raw pairs only the cyclic pair set aside stays reversed.
    assert total.after.reversed == 1
    assert [(p.preferred, p.other) for p in total.set_aside] == [("l3", "l1")]
    assert count_reversals(pairs, result.scores).reversed == 1
    by_instruction = {r.instruction: r for r in result.reports}
    assert by_instruction["push the block right"].after.reversed == 0
    assert by_instruction["open the drawer"].after.reversed == 0


def test_edits_are_the_least_squares_ones_and_leave_other_clips_alone():
    result = poise(_clips(), _pairs())
    for clip, value in EDITED.items():
        assert result.scores[clip] == pytest.approx(value, abs=1e-12), clip
    original = {c.id: c.score for c in _clips()}
    for clip in UNTOUCHED:  # exactly: no conflict reaches them (dx sits between d1 and d2: not pooled)
        assert result.scores[clip] == original[clip], clip
    total = result.total()
    assert total.edited == len(EDITED)
    assert total.abs_edit == pytest.approx(0.3 + 0.3 + 0.05 + 0.05 + 0.15 + 0.15 + 0.3 + 0.3)


def test_a_cycle_is_reported_with_its_ranking():
    result = poise(_clips(), _pairs())
    lift = {r.instruction: r for r in result.reports}["lift the green block"]
    assert lift.cycles == [["l1", "l2", "l3"]]  # net wins all 0: by original score
    assert lift.cyclic_pairs == 3 and len(lift.set_aside) == 1
    # A cycle alone: one pair cannot agree with any scores, and is counted, not forced.
    alone = poise([Clip("u", "t", 0.5), Clip("v", "t", 0.5), Clip("w", "t", 0.5)],
                  [Pair("t", "u", "v"), Pair("t", "v", "w"), Pair("t", "w", "u")])
    assert alone.total().cyclic_pairs == 3 and alone.total().edited == 0


def _write(path, rows):
    if str(path).endswith(".csv"):
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def _files(tmp_path, scores_name="scores.jsonl", pairs_name="pairs.csv"):
    clips = [{"id": c.id, "instruction": c.instruction, "score": c.score, "annotator": "kim"} for c in _clips()]
    scores = _write(tmp_path / scores_name, clips)
    pairs = _write(tmp_path / pairs_name, [{"instruction": i, "a": other, "b": preferred, "preferred": "b"}
                                           for i, preferred, other in PAIRS])
    return scores, pairs


def test_the_command_prints_the_table_and_writes_what_finetune_reads(tmp_path):
    scores, pairs = _files(tmp_path)
    out, report = tmp_path / "edited.jsonl", tmp_path / "poise.json"
    done = subprocess.run([sys.executable, "-m", "robo_reward_ros.cli.main", "poise", "--scores", scores,
                           "--pairs", pairs, "--out", str(out), "--report", str(report)],
                          cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:5] == ["instruction", "clips", "pairs", "reversed", "before"]
    total = next(line for line in lines if line.startswith("all "))
    assert total.split()[:7] == ["all", "15", "12", "5", "(41.7%)", "1", "(8.3%)"]
    assert "4 -> 0" in total
    assert "cycle in 'lift the green block': l1, l2, l3" in done.stdout
    assert "set aside: l3 > l1 (still reversed after editing)" in done.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["id"]: r["score"] for r in rows}["p4"] == pytest.approx(0.55)
    assert {r["id"]: r["original_score"] for r in rows}["p4"] == 0.5
    assert all(r["annotator"] == "kim" for r in rows)  # other fields pass through
    counts = json.loads(report.read_text())["total"]
    assert (counts["before"]["reversed"], counts["consistent_after"]["reversed"]) == (5, 0)
    # The output is a scores file again: nothing left to edit.
    again = poise(read_clips(str(out)), read_pairs(pairs))
    assert again.total().edited == 0 and again.total().consistent_before.reversed == 0


def test_csv_in_and_out(tmp_path):
    scores, pairs = _files(tmp_path, "scores.csv", "pairs.jsonl")
    result = poise(read_clips(scores), read_pairs(pairs))
    write_clips(str(tmp_path / "edited.csv"), result)
    back = {c.id: c.score for c in read_clips(str(tmp_path / "edited.csv"))}
    assert back["d1"] == pytest.approx(0.5) and back["dx"] == 0.45


@pytest.mark.parametrize("change, message", [
    (lambda s, p: p.append({"instruction": "open the drawer", "a": "d1", "b": "zz", "preferred": "a"}),
     "clip 'zz' has no score"),
    (lambda s, p: p.append({"instruction": "open the drawer", "a": "d1", "b": "p1", "preferred": "a"}),
     "a pair across instructions"),
    (lambda s, p: s[0].update(score="high"), "the score of clip 'p1' is 'high', not a finite number"),
    (lambda s, p: s[0].update(score=float("nan")), "not a finite number"),
    (lambda s, p: s[0].pop("id"), "no 'id'"),
    (lambda s, p: s.append(dict(s[1])), "clip id 'p2' again"),
    (lambda s, p: p[0].update(preferred="d3"), "preferred is 'd3'; give a, b"),
    (lambda s, p: p.append({"instruction": "t", "a": "b", "b": "k", "preferred": "b"}), "ambiguous"),
])
def test_bad_input_is_named(tmp_path, change, message):
    scores = [{"id": c.id, "instruction": c.instruction, "score": c.score} for c in _clips()]
    pairs = [{"instruction": i, "a": preferred, "b": other, "preferred": "a"} for i, preferred, other in PAIRS]
    change(scores, pairs)
    with pytest.raises(ValueError, match=re.escape(message)):
        poise(read_clips(_write(tmp_path / "s.jsonl", scores)), read_pairs(_write(tmp_path / "p.jsonl", pairs)))


def test_the_command_names_bad_input_in_one_line(tmp_path):
    scores, pairs = _files(tmp_path)
    bad = _write(tmp_path / "bad.csv", [{"instruction": "open the drawer", "a": "d1", "b": "p1", "preferred": "a"}])
    done = subprocess.run([sys.executable, "-m", "robo_reward_ros.cli.main", "poise", "--scores", scores,
                           "--pairs", bad, "--out", str(tmp_path / "o.jsonl")],
                          cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("robo-reward poise: ") and "a pair across instructions" in done.stderr


def test_finetune_trains_on_the_edited_scores(tiny_robometer_dir, tmp_path):
    pytest.importorskip("rosbags", reason="rosbags is not installed")
    pytest.importorskip("accelerate", reason="accelerate is not installed")
    import torch
    from robo_reward_ros.core.frame import Frame
    from robo_reward_ros.recordings.episode import Episode, FrameTruth
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    from robo_reward_ros.training.finetune import FinetuneConfig, Finetuner
    from robo_reward_ros.training.objective import build_batch
    instruction = "push the block right"
    ramp = np.linspace(0.0, 1.0, 8)
    for name, outcome, truth in (("push_ok", "success", True), ("push_short", "failure", False)):
        frames = [Frame(stamp=0.1 * k, rgb=np.full((64, 64, 3), 30 + 20 * k, np.uint8)) for k in range(8)]
        rows = [FrameTruth(0, bool(p >= 0.99), float(p)) for p in ramp] if truth else None
        write_episode_bag(Episode(name=name, instructions=(instruction,), frames=frames, truth=rows,
                                  outcome=outcome, task=instruction, source="test"), str(tmp_path / "bags" / name))
    # The edited labels: the success scores 0.6, the failure (no labels of its own) 0.4.
    scores = _write(tmp_path / "edited.jsonl", [{"id": "push_ok", "instruction": instruction, "score": 0.6},
                                                {"id": "push_short", "instruction": instruction, "score": 0.4},
                                                {"id": "elsewhere", "instruction": instruction, "score": 0.9}])
    logs = []
    trainer = Finetuner(FinetuneConfig(model=tiny_robometer_dir, episodes=[str(tmp_path / "bags")],
                                       out=str(tmp_path / "out"), epochs=1, steps_per_epoch=1, batch_size=4,
                                       warmup_steps=1, progress_bar=False, counterfactual_fraction=0.0,
                                       preference_fraction=0.0, clip_scores=scores), log=logs.append)
    assert any("2 episode(s) take their progress labels" in line for line in logs), logs
    assert any("1 scored clip(s) name no training episode: elsewhere" in line for line in logs), logs
    stages = {episode.name: stage for episode, stage in trainer.sampler.labelled}
    assert set(stages) == {"push_ok", "push_short"}  # the failure now carries progress labels
    np.testing.assert_allclose(stages["push_ok"].progress, 0.6 * ramp, atol=1e-6)
    np.testing.assert_allclose(stages["push_short"].progress, 0.4 * ramp, atol=1e-6)
    assert not stages["push_short"].success.any()
    # The targets the loss is computed against.
    targets = []
    for step in range(2):
        batch = build_batch(trainer.backend, trainer.draw(step), torch.device("cpu"))
        targets += batch.progress[~torch.isnan(batch.progress)].tolist()
    assert max(targets) == pytest.approx(0.6, abs=1e-6) and 0.4 in [round(t, 6) for t in targets]
    assert set(np.round(targets, 5)) <= set(np.round(np.concatenate([0.6 * ramp, 0.4 * ramp]), 5))
    assert np.isfinite(trainer.train_step(trainer.draw(0))["loss"])
