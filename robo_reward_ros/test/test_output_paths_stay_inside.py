# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Names that come from recordings never take an output outside ``--out``, nor remove what the tool did not write."""
import os

import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")

from scripted_backend import painted  # noqa: E402

SCRIPTED = dict(model="scripted", backend="pixel_scripted", progress_bar=False,
                params=["model.plugin_modules=scripted_backend", "inference.rate_hz=2"])
HOSTILE = ["../../victim", "{absolute}", "a/b", "..", "bell\x07and\nnewline", ".hidden"]


def _bag_named(name, folder, index=0):
    from robo_reward_ros.core.frame import Frame
    from robo_reward_ros.recordings.episode import Episode
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    frames = [Frame(stamp=0.1 * i, rgb=painted(0.1 + 0.02 * i, 0.0)) for i in range(12)]
    return write_episode_bag(Episode(name=name, instructions=("stack the cups",), frames=frames),
                             os.path.join(folder, f"bag{index}"))


def _files_under(folder):
    return {os.path.join(root, f) for root, _, files in os.walk(folder) for f in files}


def test_hostile_episode_names_stay_under_out_and_remove_nothing_else(tmp_path):
    from robo_reward_ros.replay.replay_run import run_replay
    out = tmp_path / "runs" / "out"
    victim = tmp_path / "runs" / "victim"  # where "../../victim" leads from out/mcap
    victim.mkdir(parents=True)
    (victim / "keep.txt").write_text("mine")
    absolute = tmp_path / "elsewhere"
    names = [n.format(absolute=absolute) for n in HOSTILE]
    bags = [_bag_named(name, str(tmp_path / "bags"), i) for i, name in enumerate(names)]
    outside_before = _files_under(str(tmp_path))
    summary = run_replay(bags, str(out), mcap=True, plots=True, **SCRIPTED)
    assert (victim / "keep.txt").read_text() == "mine"
    assert not absolute.exists()
    assert _files_under(str(tmp_path)) - _files_under(str(out)) == outside_before
    real_out = os.path.realpath(out)
    assert all(os.path.realpath(p).startswith(real_out + os.sep) for p in _files_under(str(out)))
    # One MCAP folder and one plot per episode: no two names became one.
    mcaps = [m for m in os.listdir(out / "mcap") if os.path.isdir(out / "mcap" / m)]
    assert len(mcaps) == len(names) and len(os.listdir(out / "plots")) == len(names)
    assert all(not m.startswith(".") and "/" not in m and "\n" not in m for m in mcaps)
    assert len(summary["mcap"]) == len(names)


def test_a_folder_in_the_way_that_the_tool_did_not_write_is_refused_not_removed(tmp_path):
    from robo_reward_ros.replay.replay_run import run_replay
    bag = _bag_named(".hidden", str(tmp_path / "bags"))
    out = tmp_path / "out"
    run_replay([bag], str(out), mcap=True, plots=False, **SCRIPTED)
    (folder,) = [m for m in os.listdir(out / "mcap") if os.path.isdir(out / "mcap" / m)]
    run_replay([bag], str(out), mcap=True, plots=False, force=True, **SCRIPTED)  # its own bag: rewritten
    (out / "mcap" / folder / "notes.txt").write_text("the user's")
    summary = run_replay([bag], str(out), mcap=True, plots=False, force=True, **SCRIPTED)
    assert [e for e in summary["errors"] if "is not an MCAP bag this tool wrote" in e], summary["errors"]
    assert (out / "mcap" / folder / "notes.txt").read_text() == "the user's"


@pytest.mark.parametrize("name, expected", [("pick_cup-01.e2", "pick_cup-01.e2"), ("wipe the table", "wipe the table")])
def test_ordinary_names_are_kept_as_they_are(name, expected):
    from robo_reward_ros.recordings.output_paths import safe_file_name
    assert safe_file_name(name) == expected


def test_changed_names_are_distinct_and_plain():
    from robo_reward_ros.recordings.output_paths import safe_file_name
    names = ["a/b", "a\\b", "a:b", "a\u200bb", "x" * 400, "..", ""]
    made = [safe_file_name(n) for n in names]
    assert len(set(made)) == len(made)
    assert all(m and not m.startswith(".") and len(m.encode()) <= 130 and "/" not in m for m in made)
