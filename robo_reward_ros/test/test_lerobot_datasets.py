# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward lerobot``: a LeRobot v3 dataset scored with the node's pipeline, and its relabelled copy.

The dataset is written here in the real v3 layout (pyarrow + PyAV); the scripted backend reads
progress from the frames' red. The relabelled copy is checked byte for byte against the original,
and, where a Python 3.12 venv with LeRobot exists (``.venv-lerobot`` at the repository root, or
ROBO_REWARD_LEROBOT_PYTHON), loaded with LeRobot's own ``LeRobotDataset``.
"""
import json
import os
import subprocess

import pytest

pytest.importorskip("pyarrow", reason="pyarrow is not installed")
pytest.importorskip("av", reason="PyAV is not installed")

from lerobot_datasets import lerobot_python, tree_hashes, write_v3_dataset  # noqa: E402
from robot_recordings import ramp  # noqa: E402

SCRIPTED = dict(model="scripted", backend="pixel_scripted", plots=False, progress_bar=False,
                params=["model.plugin_modules=scripted_backend", "inference.rate_hz=2"])


@pytest.fixture(scope="module")
def relabelled(tmp_path_factory):
    from robo_reward_ros.replay.lerobot_run import run_lerobot
    root = tmp_path_factory.mktemp("lerobot")
    dataset = write_v3_dataset(str(root / "pick"), [("pick up the cube", ramp(40, 1.0, 25)),
                                                    ("open the drawer", [(0.3, 0.05)] * 30)])
    out, copy = str(root / "scores"), str(root / "pick_rewarded")
    summary = run_lerobot(dataset, out, relabel=copy, **SCRIPTED)
    return dataset, out, copy, summary


def _jsonl(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_every_episode_is_scored_on_every_camera_key_with_the_datasets_task(relabelled):
    _, out, _, summary = relabelled
    assert (summary["episodes"], summary["scored"]) == (2, 2)
    with open(os.path.join(out, "episodes.json")) as handle:
        episodes = json.load(handle)["episodes"]
    assert [(e["name"], e["instructions"]) for e in episodes] == [
        ("pick_ep000000", ["pick up the cube"]), ("pick_ep000001", ["open the drawer"])]
    # The first episode's frames are read until the monitor declared success; all of the second's.
    success_at = episodes[0]["detected_success_stamp"]
    assert episodes[0]["frames"] == round(success_at * 10) + 1 and episodes[1]["frames"] == 30
    estimates = [e for e in _jsonl(os.path.join(out, "estimates.jsonl")) if e["episode"] == "pick_ep000000"]
    assert {e["camera"] for e in estimates} == {"observation.images.top", "observation.images.wrist"}
    for estimate in estimates:  # progress painted as stamp / 3.9 s, through H.264
        assert estimate["progress"] == pytest.approx(estimate["stamp"] / 3.9, abs=0.03)
    events = _jsonl(os.path.join(out, "events.jsonl"))
    assert ("pick_ep000000", "succeeded") in [(e["episode"], e["status"]) for e in events]


def test_the_copy_adds_the_label_columns_and_leaves_everything_else_byte_identical(relabelled):
    import pyarrow.parquet as pq
    dataset, out, copy, _ = relabelled
    data = os.path.join("data", "chunk-000", "file-000.parquet")
    info = os.path.join("meta", "info.json")
    before, after = tree_hashes(dataset), tree_hashes(copy)
    assert set(before) == set(after)
    assert {name for name in before if before[name] != after[name]} == {data, info}
    original, labelled = pq.read_table(os.path.join(dataset, data)), pq.read_table(os.path.join(copy, data))
    assert labelled.select(original.column_names).equals(original)
    assert labelled.column_names[len(original.column_names):] == [
        "robo_reward.progress", "robo_reward.success_probability", "robo_reward.reward",
        "robo_reward.success", "robo_reward.terminal"]
    with open(os.path.join(dataset, info)) as a, open(os.path.join(copy, info)) as b:
        info_before, info_after = json.load(a), json.load(b)
    assert {k: v for k, v in info_after["features"].items() if k in info_before["features"]} == \
        info_before["features"]
    assert info_after["features"]["robo_reward.success"] == {"dtype": "bool", "shape": [1], "names": None}
    # Each frame carries the newest estimate at or before it (mean over the two cameras).
    rows = labelled.to_pylist()
    estimates = [e for e in _jsonl(os.path.join(out, "estimates.jsonl")) if e["episode"] == "pick_ep000000"]
    for row in rows[:40]:
        held = [e for e in estimates if e["stamp"] <= row["timestamp"] + 1e-6]
        if not held:
            assert row["robo_reward.progress"] != row["robo_reward.progress"]  # NaN before the first
            continue
        newest = held[-1]["stamp"]
        expected = sum(e["progress"] for e in held if e["stamp"] == newest) / 2
        assert row["robo_reward.progress"] == pytest.approx(expected, abs=1e-5)
    with open(os.path.join(out, "episodes.json")) as handle:
        success_at = json.load(handle)["episodes"][0]["detected_success_stamp"]
    assert [r["robo_reward.success"] for r in rows[:40]] == [r["timestamp"] >= success_at - 1e-6 for r in rows[:40]]
    assert rows[39]["robo_reward.terminal"] and not any(r["robo_reward.terminal"] for r in rows[40:])


def test_a_rerun_reuses_the_scored_episodes_and_refuses_to_overwrite_a_copy(relabelled, capsys):
    from robo_reward_ros.cli.lerobot import main
    dataset, out, copy, _ = relabelled
    common = [dataset, "--out", out, "--backend", "pixel_scripted", "--model", "scripted", "-p",
              "model.plugin_modules=scripted_backend", "-p", "inference.rate_hz=2", "--no-plots", "--quiet"]
    assert main(common) == 0
    assert "(0 scored, 2 already scored)" in capsys.readouterr().out
    assert main(common + ["--relabel", copy]) == 1
    assert f"{copy} exists" in capsys.readouterr().err
    assert main(common + ["--camera-key", "observation.images.side"]) == 1
    assert "no camera key ['observation.images.side']" in capsys.readouterr().err


def test_relabel_refuses_a_link_out_of_the_dataset_and_keeps_links_inside_it_as_links(relabelled, tmp_path, capsys):
    import shutil
    from robo_reward_ros.cli.lerobot import main
    dataset, out, _, _ = relabelled
    linked = tmp_path / "linked"
    shutil.copytree(dataset, linked)
    (linked / "meta" / "README.md").symlink_to("info.json")  # inside: kept as a link
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY")
    common = [str(linked), "--out", str(tmp_path / "scores"), "--backend", "pixel_scripted", "--model",
              "scripted", "-p", "model.plugin_modules=scripted_backend", "-p", "inference.rate_hz=2",
              "--no-plots", "--quiet"]
    assert main(common + ["--relabel", str(tmp_path / "inside_only")]) == 0
    copied = tmp_path / "inside_only" / "meta" / "README.md"
    assert copied.is_symlink() and os.readlink(copied) == "info.json"
    (linked / "meta" / "notes.txt").symlink_to(secret)
    assert main(common + ["--relabel", str(tmp_path / "leaky")]) == 1
    assert "outside the dataset" in capsys.readouterr().err
    assert not (tmp_path / "leaky").exists()


@pytest.mark.parametrize("fill", ["first", "zero"])
def test_relabel_fill_gives_the_frames_before_the_first_estimate_a_value(relabelled, tmp_path, capsys, fill):
    import pyarrow.parquet as pq
    from robo_reward_ros.cli.lerobot import main
    dataset, out, copy, _ = relabelled
    filled = str(tmp_path / "filled")
    assert main([dataset, "--out", out, "--backend", "pixel_scripted", "--model", "scripted", "-p",
                 "model.plugin_modules=scripted_backend", "-p", "inference.rate_hz=2", "--no-plots",
                 "--quiet", "--relabel", filled, "--relabel-fill", fill]) == 0
    data = os.path.join("data", "chunk-000", "file-000.parquet")
    plain = pq.read_table(os.path.join(copy, data)).to_pylist()
    rows = pq.read_table(os.path.join(filled, data)).to_pylist()
    for episode in (0, 1):
        indices = [i for i, r in enumerate(plain) if r["episode_index"] == episode]
        first = next(i for i in indices if plain[i]["robo_reward.progress"] == plain[i]["robo_reward.progress"])
        assert first > indices[0]  # the episode has frames before its first estimate
        for name in ("progress", "success_probability", "reward"):
            column = "robo_reward." + name
            want = plain[first][column] if fill == "first" else 0.0
            assert [rows[i][column] for i in indices if i < first] == [want] * (first - indices[0])
            assert [rows[i][column] for i in indices if i >= first] == [
                plain[i][column] for i in indices if i >= first]


def test_an_older_format_is_refused_with_what_to_do(tmp_path):
    from robo_reward_ros.recordings.lerobot_dataset import DatasetError, LeRobotFolder
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "info.json").write_text(json.dumps({"codebase_version": "v2.1", "fps": 10,
                                                            "features": {}}))
    with pytest.raises(DatasetError, match="v2.1.*convert_dataset_v21_to_v30"):
        LeRobotFolder(str(tmp_path))


LEROBOT_CHECK = r"""
import json, sys
from lerobot.datasets.lerobot_dataset import LeRobotDataset
dataset = LeRobotDataset("local/pick_rewarded", root=sys.argv[1])
rows = []
for index in (0, 12, 39, 40, 69):
    item = dataset[index]
    rows.append({"progress": float(item["robo_reward.progress"]), "success": bool(item["robo_reward.success"]),
                 "terminal": bool(item["robo_reward.terminal"]), "task": item["task"],
                 "image": list(item["observation.images.top"].shape),
                 "red": float(item["observation.images.top"][0].mean())})
print(json.dumps({"episodes": dataset.num_episodes, "frames": dataset.num_frames, "rows": rows}))
"""


def test_lerobot_itself_loads_the_relabelled_copy(relabelled):
    python = lerobot_python()
    if python is None:
        pytest.skip("no Python 3.12 venv with LeRobot (.venv-lerobot or ROBO_REWARD_LEROBOT_PYTHON)")
    _, _, copy, _ = relabelled
    result = subprocess.run([python, "-c", LEROBOT_CHECK, copy], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""})
    assert result.returncode == 0, result.stderr[-3000:]
    import pyarrow.parquet as pq
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert (loaded["episodes"], loaded["frames"]) == (2, 70)
    table = pq.read_table(os.path.join(copy, "data", "chunk-000", "file-000.parquet")).to_pylist()
    for index, row in zip((0, 12, 39, 40, 69), loaded["rows"]):
        expected = table[index]
        assert (row["success"], row["terminal"]) == (expected["robo_reward.success"],
                                                     expected["robo_reward.terminal"])
        if expected["robo_reward.progress"] == expected["robo_reward.progress"]:
            assert row["progress"] == pytest.approx(expected["robo_reward.progress"])
        else:
            assert row["progress"] != row["progress"]
        assert row["task"] == ("pick up the cube" if index < 40 else "open the drawer")
        assert row["image"] == [3, 48, 64]
        # LeRobot decodes the frame of this row: red is the painted progress (0.3 in episode 2).
        painted = index / 39 if index < 40 else 0.3
        assert row["red"] == pytest.approx(painted, abs=0.03)
