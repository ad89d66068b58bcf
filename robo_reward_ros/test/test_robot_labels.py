# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Robot recordings judged and trained on with a labels file: eval and finetune on bags that carry no outcome.

The bags are real rosbag2 files in a robot's own layout (rosbags writer); the scripted backend reads
progress from the frames' red and success from their green, so what eval must find is known.
"""
import json

import numpy as np
import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")

from robot_recordings import ramp, write_recording  # noqa: E402

CAMERA = "/arm/image_raw/compressed"
SCRIPTED = dict(model="scripted", backend="pixel_scripted", plots=False, progress_bar=False,
                params=["model.plugin_modules=scripted_backend", "inference.rate_hz=2"])
LABELS = ("episode,outcome,success_sec,failure_sec,task,failure_kind\n"
          "shift_e000,success,3.0,,pick the cup,\n"
          "shift_e001,failure,,1.0,pick the cup,stall\n"
          "shift_e002,partial,,,pick the cup,\n")


def _options():
    from robo_reward_ros.recordings.robot_recording import RecordingOptions
    return RecordingOptions(camera_topics=(CAMERA,), instruction="pick up the cup", split_gap_sec=1.0)


@pytest.fixture(scope="module")
def shift(tmp_path_factory):
    """One bag of a robot's shift: three attempts, a success, a stalled failure and a partial one."""
    root = tmp_path_factory.mktemp("robot_labels")
    flat = [(0.3 * min(i, 10) / 10, 0.05) for i in range(40)]
    bag = write_recording(str(root / "shift"), {CAMERA: "jpeg"},
                          [("", ramp(40, 1.0, 30)), ("", flat), ("", ramp(40, 0.6))],
                          instruction_topic=None, size=(64, 64))
    labels = root / "labels.csv"
    labels.write_text(LABELS)
    return {"root": root, "bag": bag, "labels": str(labels)}


@pytest.fixture(scope="module")
def replayed(shift):
    from robo_reward_ros.replay.replay_run import run_replay
    out = str(shift["root"] / "replay")
    summary = run_replay([shift["bag"]], out, reading=_options(), **SCRIPTED)
    assert (summary["episodes"], summary["errors"]) == (3, [])
    return out


def test_eval_judges_robot_episodes_only_with_their_labels(shift, replayed, tmp_path, capsys):
    from robo_reward_ros.cli.evaluate import main
    from robo_reward_ros.evaluation.eval_run import run_eval
    unlabelled = run_eval([replayed], str(tmp_path / "plain"), preference=False)["metrics"]
    assert unlabelled["episodes_with_outcome"] == 0  # a robot bag says nothing about its outcome
    assert main([replayed, "--out", str(tmp_path / "eval"), "--labels", shift["labels"]]) == 0
    with open(tmp_path / "eval" / "metrics.json") as handle:
        report = json.load(handle)
    metrics, rows = report["metrics"], {r["name"]: r for r in report["episodes"]}
    assert report["labels"] == shift["labels"] and metrics["episodes_with_outcome"] == 3
    assert {n: r["outcome"] for n, r in rows.items()} == {
        "shift_e000": "success", "shift_e001": "failure", "shift_e002": "partial"}
    assert {r["task"] for r in rows.values()} == {"pick the cup"}
    # Success detected (green from frame 30 = 3.0 s), after the labelled success time.
    assert metrics["success_detection"]["f1"] == 1.0
    assert rows["shift_e000"]["gt_success_stamp"] == 3.0
    assert metrics["success_detection_delay_s"]["mean"] == pytest.approx(
        rows["shift_e000"]["detected_success_stamp"] - 3.0)
    # Progress truth rises linearly to the labelled success: the ramp follows it.
    assert rows["shift_e000"]["voc_pearson"] > 0.95
    assert rows["shift_e001"]["voc_pearson"] is None  # a failure gets no progress truth
    # The node's final task progress orders success > partial > failure.
    assert metrics["kendall_tau_a"]["mean"] == 1.0
    # Preference pairs re-read their clips from the robot recording (two-camera-free, split bag).
    assert metrics["preference_pairs"] == 3 and metrics["preference_accuracy"] == 1.0
    # The scripted judge's pairwise answers follow its own progress scores on every pair.
    assert metrics["score_pair_consistency"] == {"consistency": 1.0, "pairs": 3, "judged": 3, "ties": 0}
    assert "preference accuracy" in capsys.readouterr().out.lower()


def test_a_bad_labels_file_is_named_by_file_and_row(shift, replayed, tmp_path, capsys):
    from robo_reward_ros.cli.evaluate import main
    from robo_reward_ros.recordings.episode_labels import LabelsError, load_labels
    cases = {
        "bad_outcome.csv": ("episode,outcome\nshift_e000,won\n", "bad_outcome.csv:2: outcome 'won'"),
        "bad_time.csv": ("episode,outcome,success_sec\nshift_e000,success,soon\n", "success_sec 'soon'"),
        "wrong_time.csv": ("episode,outcome,failure_sec\nshift_e000,success,2\n", "failure_sec is given"),
        "twice.csv": ("episode,outcome\nshift_e000,success\nshift_e000,failure\n", "labelled twice"),
        "no_header.csv": ("shift_e000,success\n", "header must name"),
    }
    for name, (text, expected) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(LabelsError, match=expected.replace("(", r"\(")):
            load_labels(str(path))
    # A label for an episode the replay does not have is a typo, not silently ignored.
    typo = tmp_path / "typo.yaml"
    typo.write_text("shift_e000: success\nshift_e009: {outcome: failure, failure_sec: 2}\n")
    assert main([replayed, "--out", str(tmp_path / "eval"), "--labels", str(typo), "--no-preference"]) != 0
    assert "shift_e009" in capsys.readouterr().err
    # An episode left out of the labels is reported, and not judged.
    some = tmp_path / "some.yaml"
    some.write_text("shift_e000: {outcome: success, success_sec: 3}\nshift_e001: failure\n")
    assert main([replayed, "--out", str(tmp_path / "eval2"), "--labels", str(some), "--no-preference"]) == 0
    out = capsys.readouterr().out
    assert "1 episode(s) without a label (not judged): shift_e002" in out


def test_finetune_reads_labelled_robot_episodes(shift):
    from robo_reward_ros.training.episodes import UnusableEpisodeError, load_episodes
    episodes = load_episodes([shift["bag"]], reading=_options(), labels_path=shift["labels"])
    episodes = {e.name: e for e in episodes}
    assert set(episodes) == {"shift_e000", "shift_e001", "shift_e002"}
    success = episodes["shift_e000"]
    assert (success.task, success.outcome, success.bag) == ("pick the cup", "success", shift["bag"])
    stage = success.stages[0]
    assert stage.instruction == "pick up the cup" and len(stage.frames) == 40
    stamps = np.array([f.stamp for f in stage.frames])
    assert stamps[0] == 0.0
    # Linear to the labelled success at 3.0 s, then done; success from 3.0 s on.
    assert np.allclose(stage.progress, np.minimum(1.0, stamps / 3.0), atol=1e-6)
    assert stage.success.tolist() == (stamps >= 3.0 - 1e-9).tolist()
    assert not episodes["shift_e001"].labelled and episodes["shift_e001"].stages[0].progress is None
    # Frames decoded as the node's intake decodes them (JPEG from a CompressedImage).
    assert stage.frames[0].rgb.shape == (64, 64, 3)
    with pytest.raises(UnusableEpisodeError, match="give --labels"):
        load_episodes([shift["bag"]], reading=_options())
    partial = shift["root"] / "partial.csv"
    partial.write_text("episode,outcome\nshift_e000,success\n")
    with pytest.raises(UnusableEpisodeError, match="shift_e001 has no label in"):
        load_episodes([shift["bag"]], reading=_options(), labels_path=str(partial))


def test_finetune_cli_trains_and_evaluates_on_a_robot_recording(shift, tiny_robometer_dir, tmp_path):
    from robo_reward_ros.cli.finetune import main
    held = write_recording(str(tmp_path / "held"), {CAMERA: "jpeg"},
                           [("", ramp(20, 1.0, 15)), ("", ramp(20, 0.2))],
                           instruction_topic=None, size=(64, 64))
    labels = tmp_path / "all.csv"
    labels.write_text(LABELS + "held_e000,success,,,pick the cup,\nheld_e001,failure,,,pick the cup,\n")
    out = tmp_path / "tuned"
    assert main(["--model", tiny_robometer_dir, "--episodes", shift["bag"], "--eval-episodes", held,
                 "--labels", str(labels), "--camera-topic", CAMERA, "--instruction", "pick up the cup",
                 "--split-gap", "1", "--out", str(out), "--epochs", "1", "--steps-per-epoch", "1",
                 "--batch-size", "2", "--quiet", "--no-eval-preference"]) == 0
    with open(out / "training.json") as handle:
        training = json.load(handle)
    assert training["episode_names"] == ["shift_e000", "shift_e001", "shift_e002"]
    assert training["config"]["reading"]["camera_topics"] == [CAMERA]
    with open(out / "eval" / "epoch-1" / "metrics.json") as handle:
        held_out = json.load(handle)
    # The per-epoch eval replayed the robot recording with the same reading options and labels.
    assert [r["name"] for r in held_out["episodes"]] == ["held_e000", "held_e001"]
    assert held_out["metrics"]["episodes_with_outcome"] == 2
