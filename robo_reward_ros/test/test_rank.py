# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward rank``: episodes and windows of LeRobot datasets and bags ranked as the painted frames say.

The scripted backend reads progress from a frame's red and success from its green, so each
episode's final progress, progress gain and success are known and the order per ``--by`` is too.
The last test runs the same ranking on two local Ray workers and compares the tables.
"""
import contextlib
import io
import math
import os

import pytest

from robo_reward_ros.cli.rank import main
from robo_reward_ros.evaluation.ranking import COLUMN_NAMES, SpanCutter, rank_rows, read_table, window_spans

pytest.importorskip("av", reason="PyAV is not installed")
pytest.importorskip("pyarrow", reason="pyarrow is not installed")

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(TEST_DIR)
SCRIPTED = ["--backend", "pixel_scripted", "--model", "scripted", "-p", "model.plugin_modules=scripted_backend",
            "--quiet"]
OPEN, CLOSE = "open the drawer", "close the drawer"


def _ramp(start, end, count, success=0.05):
    return [(start + (end - start) * i / (count - 1), success) for i in range(count)]


# (task, frames): final progress / gain / success of each episode differ in order on purpose.
EPISODES = [
    (OPEN, _ramp(0.6, 0.7, 8)),          # 0: final 0.7, gain 0.1, success 0.05
    (OPEN, _ramp(0.0, 0.6, 8, 0.9)),     # 1: final 0.6, gain 0.6, success 0.9
    (OPEN, _ramp(0.1, 0.4, 8, 0.5)),     # 2: final 0.4, gain 0.3, success 0.5
    (CLOSE, _ramp(0.2, 0.9, 8)),         # 3: the other task
]
ORDER = {"final_progress": ["0", "1", "2"], "progress_gain": ["1", "2", "0"], "success": ["1", "2", "0"]}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    from lerobot_datasets import write_v3_dataset
    return write_v3_dataset(str(tmp_path_factory.mktemp("ds") / "mixed"), EPISODES, keys=("observation.images.top",))


@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    """Write three one-episode bags in one folder, robot layout: /camera/image_raw and /instruction."""
    from robot_recordings import write_recording
    root = tmp_path_factory.mktemp("bags")
    for name, (task, values) in zip(("b_low", "a_high", "c_mid"), (EPISODES[2], EPISODES[0], EPISODES[1])):
        write_recording(str(root / name), {"/camera/image_raw": "rgb8"}, [(task, values)],
                        instruction_topic="/instruction")
    return str(root)


def _run(capsys, *args):
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_window_spans_cover_every_frame_and_keep_one_partial_window():
    assert window_spans(10, 4, 3) == [(0, 4), (3, 7), (6, 10)]  # the last full window ends the episode
    assert window_spans(11, 4, 3) == [(0, 4), (3, 7), (6, 10), (9, 11)]  # one partial window at the end
    assert window_spans(9, 4, 0) == [(0, 4), (4, 8), (8, 9)]  # stride defaults to the window
    assert window_spans(3, 4, 2) == [(0, 3)]  # shorter than a window: the whole episode
    assert window_spans(5) == [(0, 5)]
    assert window_spans(10, 2, 5) == [(0, 2), (5, 7)]  # a stride over the window leaves gaps, as asked
    with pytest.raises(ValueError, match="--stride needs --window"):
        SpanCutter(0, 3)


def test_rank_rows_per_instruction_with_nan_last_and_deterministic_ties():
    base = {"kind": "bag", "end_frame": 2, "start_time": 0.0, "end_time": 0.1, "progress_gain": 0.0,
            "success": math.nan, "preference": math.nan}
    rows = [{**base, "source": "/s", "episode": e, "instruction": i, "start_frame": f, "final_progress": p}
            for e, i, f, p in [("10", "b", 0, 0.5), ("9", "b", 0, 0.5), ("9", "b", 3, 0.5), ("1", "a", 0, math.nan),
                               ("2", "a", 0, 0.1)]]
    ranked = rank_rows(reversed(rows), "final_progress")
    assert [(r["instruction"], r["episode"], r["start_frame"], r["rank"]) for r in ranked] == [
        ("a", "2", 0, 1), ("a", "1", 0, 2), ("b", "9", 0, 1), ("b", "9", 3, 2), ("b", "10", 0, 3)]
    assert list(ranked[0]) == list(COLUMN_NAMES) and ranked[0]["ranked_by"] == "final_progress"
    with pytest.raises(ValueError, match="unknown ranking"):
        rank_rows(rows, "length")


@pytest.mark.parametrize("by", ["final_progress", "progress_gain", "success"])
def test_lerobot_episodes_rank_in_the_painted_order(dataset, tmp_path, capsys, by):
    out = str(tmp_path / "ranked.csv")
    status, printed, err = _run(capsys, dataset, "--by", by, "--out", out, *SCRIPTED)
    assert status == 0, err
    rows = read_table(out)
    opened = [r for r in rows if r["instruction"] == OPEN]
    assert [r["episode"] for r in opened] == ORDER[by]
    assert [r["rank"] for r in opened] == [1, 2, 3]
    assert [(r["instruction"], r["episode"], r["rank"]) for r in rows if r["instruction"] == CLOSE] == [(CLOSE, "3", 1)]
    first = {r["episode"]: r for r in rows}
    assert first["0"]["final_progress"] == pytest.approx(0.7, abs=0.02)
    assert first["1"]["progress_gain"] == pytest.approx(0.6, abs=0.02)
    assert first["1"]["success"] == pytest.approx(0.9, abs=0.02)
    assert all(r["score"] == r[by] and r["ranked_by"] == by and math.isnan(r["preference"]) for r in rows)
    assert all(r["source"] == os.path.abspath(dataset) and r["kind"] == "lerobot" for r in rows)
    assert all((r["start_frame"], r["end_frame"], r["start_time"]) == (0, 8, 0.0) for r in rows)
    assert all(r["end_time"] == pytest.approx(0.7, abs=1e-6) for r in rows)
    assert f"ranked by {by}" in printed and "'open the drawer'" in printed


def test_given_instruction_windows_and_parquet(dataset, tmp_path, capsys):
    import pyarrow.parquet as pq
    out = str(tmp_path / "windows.parquet")
    status, _, err = _run(capsys, dataset, "--instruction", CLOSE, "--window", "3", "--stride", "2",
                          "--out", out, *SCRIPTED)
    assert status == 0, err
    table = pq.read_table(out)
    assert table.column_names == list(COLUMN_NAMES)
    assert [str(table.schema.field(n).type) for n in ("episode", "start_frame", "end_time", "rank")] == [
        "string", "int64", "double", "int64"]
    rows = table.to_pylist()
    assert {r["instruction"] for r in rows} == {CLOSE} and len(rows) == 4 * 4
    spans = sorted((r["start_frame"], r["end_frame"]) for r in rows if r["episode"] == "1")
    assert spans == [(0, 3), (2, 5), (4, 7), (6, 8)]  # 8 frames: the last window is partial
    for row in rows:
        assert row["start_time"] == pytest.approx(row["start_frame"] / 10, abs=1e-6)
        assert row["end_time"] == pytest.approx((row["end_frame"] - 1) / 10, abs=1e-6)
    best = rows[0]  # episode 3's last window ends highest (0.9), then its middle ones
    assert (best["episode"], best["start_frame"], best["rank"]) == ("3", 6, 1)
    assert [r["rank"] for r in rows] == list(range(1, 17))


def test_bags_rank_by_preference_against_a_reference(bags, tmp_path, capsys):
    out = str(tmp_path / "bags.csv")
    reference = os.path.join(bags, "c_mid")
    status, _, err = _run(capsys, bags, "--by", "preference", "--reference", reference, "--out", out, *SCRIPTED)
    assert status == 0, err
    rows = read_table(out)
    assert [r["episode"] for r in rows] == ["a_high", "c_mid", "b_low"]
    assert all(r["kind"] == "bag" and r["source"] == os.path.join(os.path.abspath(bags), r["episode"]) for r in rows)
    by_name = {r["episode"]: r for r in rows}
    assert by_name["c_mid"]["preference"] == pytest.approx(0.5, abs=1e-6)  # against itself
    assert by_name["a_high"]["preference"] > 0.5 > by_name["b_low"]["preference"]
    assert by_name["a_high"]["final_progress"] == pytest.approx(0.7, abs=0.01)
    assert by_name["a_high"]["end_time"] == pytest.approx(0.7, abs=1e-6)


@pytest.mark.parametrize("args, message", [
    (["--by", "length"], "--by length: unknown ranking (choose from final_progress"),
    (["--by", "preference"], "--by preference needs --reference CLIP"),
    (["--out", "ranked.txt"], "the table must be a .parquet or .csv file"),
    (["--window", "-2"], "--window and --stride must be >= 0"),
    (["--by", "preference", "--reference", "/no/such/clip"], "--reference /no/such/clip: no such bag or dataset"),
    (["--camera-key", "observation.images.side"], "no camera key ['observation.images.side']"),
])
def test_bad_options_say_one_line(dataset, tmp_path, capsys, args, message):
    out = ["--out", str(tmp_path / "r.csv")] if "--out" not in args else []
    status, printed, err = _run(capsys, dataset, *out, *args, *SCRIPTED)
    assert status == 1 and printed == ""
    assert err.count("\n") == 1 and err.startswith("robo-reward rank: ") and message in err


def test_missing_data_and_a_backend_without_preference(dataset, bags, tmp_path, capsys):
    status, _, err = _run(capsys, str(tmp_path / "nothing"), "--out", str(tmp_path / "r.csv"), *SCRIPTED)
    assert status == 1 and err.count("\n") == 1 and "no such dataset, bag or folder" in err
    verifier = [a if a != "pixel_scripted" else "pixel_scripted_verifier" for a in SCRIPTED]
    status, _, err = _run(capsys, dataset, "--by", "preference", "--reference", os.path.join(bags, "c_mid"),
                          "--out", str(tmp_path / "r.csv"), *verifier)
    assert status == 1 and err.count("\n") == 1
    assert "pixel_scripted_verifier backend has no preference mode (its capabilities say preference=False)" in err
    assert not os.path.exists(tmp_path / "r.csv")


def test_a_bag_without_instruction_needs_one_given(tmp_path, capsys):
    from robot_recordings import write_recording
    bag = write_recording(str(tmp_path / "silent"), {"/camera/image_raw": "rgb8"}, [(OPEN, EPISODES[0][1])],
                          instruction_topic=None)
    out = str(tmp_path / "r.csv")
    status, _, err = _run(capsys, bag, "--instruction", CLOSE, "--out", out, *SCRIPTED)
    assert status == 0, err
    (row,) = read_table(out)
    assert (row["episode"], row["instruction"], row["end_frame"]) == ("silent", CLOSE, 8)
    status, _, err = _run(capsys, bag, "--out", out, *SCRIPTED)
    assert status == 1 and err.count("\n") == 1 and "no instruction: pass --instruction" in err


@pytest.fixture(scope="module")
def ray_runtime_for_tests():
    """Start a local 2-CPU runtime whose workers import the scripted backend from this checkout."""
    pytest.importorskip("ray.data", reason="Ray Data is not installed (requirements/scale.txt)")
    import ray
    from robo_reward_ros.replay.ray_replay import RayOptions, ray_runtime
    if ray.is_initialized():
        ray.shutdown()
    saved = dict(os.environ)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SOURCE, TEST_DIR, saved.get("PYTHONPATH")) if p)
    try:
        with ray_runtime(RayOptions(workers=2), log=lambda _: None):
            os.environ.clear()
            os.environ.update(saved)
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_ray_workers_write_the_single_process_table(ray_runtime_for_tests, dataset, bags, tmp_path, capsys):
    single, on_ray = str(tmp_path / "single.csv"), str(tmp_path / "ray.csv")
    common = [dataset, bags, "--window", "5", "--stride", "3", "--by", "success", *SCRIPTED]
    assert _run(capsys, *common, "--out", single)[0] == 0
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        status = main(common + ["--out", on_ray, "--ray", "--ray-workers", "2"])
    assert status == 0, stderr.getvalue()
    want, got = read_table(single), read_table(on_ray)
    assert len(want) == 2 * 7 and [r["episode"] for r in got] == [r["episode"] for r in want]
    for a, b in zip(got, want):
        for name in COLUMN_NAMES:
            if isinstance(b[name], float):
                assert a[name] == pytest.approx(b[name], abs=1e-6, nan_ok=True), name
            else:
                assert a[name] == b[name], name
