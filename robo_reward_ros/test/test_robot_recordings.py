# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward replay`` on robot-style recordings.

The team's topic names, several cameras, compressed images, several episodes per bag, MCAP and sqlite3.

The scripted backend reads progress from the frames' red and success from their green, so what
the replay must report is known; the bags are real rosbag2 files written with the rosbags writer.
"""
import json
import os

import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")

from robot_recordings import ramp, write_recording  # noqa: E402

WRIST, SCENE = "/wrist/image_raw/compressed", "/scene/image_raw"
SCRIPTED = dict(model="scripted", backend="pixel_scripted", plots=False, progress_bar=False,
                params=["model.plugin_modules=scripted_backend", "inference.rate_hz=2"])


def _options(**fields):
    from robo_reward_ros.recordings.robot_recording import RecordingOptions
    return RecordingOptions(**fields)


def _read(out, name):
    with open(os.path.join(out, name)) as handle:
        if name.endswith(".jsonl"):
            return [json.loads(line) for line in handle if line.strip()]
        return json.load(handle)


def _two_episode_bag(path, storage, **kwargs):
    return write_recording(path, {WRIST: "jpeg", SCENE: "bgr8"},
                           [("pick up the cup", ramp(40, 1.0, 30)), ("open the drawer", ramp(20, 0.3))],
                           storage=storage, **kwargs)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_two_cameras_compressed_and_raw_split_by_a_time_gap(tmp_path, storage):
    from robo_reward_ros.replay.replay_run import run_replay
    bag = _two_episode_bag(str(tmp_path / "robot"), storage)
    out = str(tmp_path / "out")
    summary = run_replay([bag], out, reading=_options(camera_topics=(WRIST, SCENE), instruction_topic="/task",
                                                      split_gap_sec=1.0), **SCRIPTED)
    assert (summary["episodes"], summary["errors"]) == (2, [])
    episodes = _read(out, "episodes.json")["episodes"]
    assert [(e["name"], e["instructions"]) for e in episodes] == [
        ("robot_e000", ["pick up the cup"]), ("robot_e001", ["open the drawer"])]
    assert episodes[1]["frames"] == 20 and episodes[1]["stamps"][0] == 0.0
    assert episodes[1]["cameras"]["/wrist/image_raw"]["topic"] == WRIST
    estimates = [e for e in _read(out, "estimates.jsonl") if e["episode"] == "robot_e000"]
    by_camera = {}
    for estimate in estimates:
        by_camera.setdefault(estimate["camera"], []).append(estimate)
    assert set(by_camera) == {"/wrist/image_raw", "/scene/image_raw"}
    # Both cameras scored on the same steps, each on its own window: the JPEG one within JPEG's error.
    wrist, scene = by_camera["/wrist/image_raw"], by_camera["/scene/image_raw"]
    assert [e["stamp"] for e in wrist] == [e["stamp"] for e in scene] == pytest.approx([0.5, 1.0, 1.5, 2.0, 2.5,
                                                                                       3.0, 3.5])
    for a, b in zip(wrist, scene):
        assert a["progress"] == pytest.approx(a["stamp"] / 3.9, abs=0.02)
        assert b["progress"] == pytest.approx(b["stamp"] / 3.9, abs=0.01)
    events = _read(out, "events.jsonl")
    assert [(e["episode"], e["type"], e["status"]) for e in events] == [
        ("robot_e000", "stage_succeeded", ""), ("robot_e000", "episode_ended", "succeeded"),
        ("robot_e001", "episode_ended", "idle")]


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_types_spelled_without_msg_are_read_like_the_full_spelling(tmp_path, storage):
    # `sensor_msgs/Image`, as some writers and converted ROS 1 bags store it, was refused with
    # "is sensor_msgs/Image, not sensor_msgs/Image or CompressedImage".
    from robo_reward_ros.recordings.robot_recording import read_recording
    from robo_reward_ros.replay.replay_run import run_replay
    bag = _two_episode_bag(str(tmp_path / "robot"), storage, short_type_names=True)
    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        assert {c.msgtype for c in reader.connections} == {
            "sensor_msgs/CompressedImage", "sensor_msgs/Image", "std_msgs/String"}
    options = _options(camera_topics=(WRIST, SCENE), instruction_topic="/task", split_gap_sec=1.0)
    assert [r.compressed for r in read_recording(bag, options)] == [{WRIST: True, SCENE: False}] * 2
    out = str(tmp_path / "out")
    summary = run_replay([bag], out, reading=options, mcap=True, **SCRIPTED)
    assert (summary["episodes"], summary["errors"]) == (2, [])
    assert [e["instructions"] for e in _read(out, "episodes.json")["episodes"]] == [
        ["pick up the cup"], ["open the drawer"]]
    assert sorted(os.listdir(os.path.join(out, "mcap"))) == ["foxglove_layout.json", "robot_e000", "robot_e001"]


def test_a_camera_of_another_type_is_refused_naming_both_types(tmp_path):
    from robo_reward_ros.recordings.robot_recording import RecordingError, read_recording
    bag = _two_episode_bag(str(tmp_path / "robot"), "mcap")
    with pytest.raises(RecordingError) as refused:
        next(read_recording(bag, _options(camera_topics=("/task",), instruction="x")))
    assert str(refused.value).endswith("camera topic /task is std_msgs/msg/String; a camera must be "
                                       "sensor_msgs/msg/Image or sensor_msgs/msg/CompressedImage")


def test_split_topic_instruction_option_and_task_file(tmp_path):
    from robo_reward_ros.replay.replay_run import run_replay
    bag = write_recording(str(tmp_path / "robot"), {"/cam/color": "png"},
                          [("a", ramp(10)), ("b", ramp(10)), ("c", ramp(10))], gap_sec=0.0,
                          instruction_topic=None, split_topic="/episode_start")
    out = str(tmp_path / "out")
    run_replay([bag], out, reading=_options(split_topic="/episode_start", instruction="stack the blocks"),
               **SCRIPTED)
    episodes = _read(out, "episodes.json")["episodes"]
    assert [(e["name"], e["frames"], e["instructions"]) for e in episodes] == [
        (f"robot_e00{i}", 10, ["stack the blocks"]) for i in range(3)]
    task_file = tmp_path / "task.yaml"
    task_file.write_text("stages:\n  - instruction: reach the cup\n  - {instruction: lift it, timeout_sec: 9}\n")
    out2 = str(tmp_path / "out2")
    run_replay([bag], out2, reading=_options(split_topic="/episode_start", task_file=str(task_file)), **SCRIPTED)
    assert _read(out2, "episodes.json")["episodes"][0]["instructions"] == ["reach the cup", "lift it"]


def test_a_rerun_reuses_scored_episodes_and_force_redoes_them(tmp_path):
    from robo_reward_ros.replay.replay_run import run_replay
    bag = _two_episode_bag(str(tmp_path / "robot"), "mcap")
    out = str(tmp_path / "out")
    reading = _options(camera_topics=(WRIST, SCENE), instruction_topic="/task", split_gap_sec=1.0)
    first = run_replay([bag], out, reading=reading, **SCRIPTED)
    before = _read(out, "estimates.jsonl")
    again = run_replay([bag], out, reading=reading, **SCRIPTED)
    assert (first["scored"], first["reused"], again["scored"], again["reused"]) == (2, 0, 0, 2)
    assert _read(out, "estimates.jsonl") == before
    changed = run_replay([bag], out, reading=reading, **{**SCRIPTED, "params": SCRIPTED["params"] + [
        "success.threshold=0.99"]})
    assert (changed["scored"], changed["reused"]) == (2, 0)  # other parameters: scored again
    forced = run_replay([bag], out, reading=reading, force=True, **{**SCRIPTED, "params": SCRIPTED["params"] + [
        "success.threshold=0.99"]})
    assert (forced["scored"], forced["reused"]) == (2, 0)


def test_a_checkpoint_retrained_in_the_same_folder_is_another_model(tmp_path):
    from robo_reward_ros.replay.replay_run import run_replay
    bag = write_recording(str(tmp_path / "robot"), {WRIST: "jpeg"}, [("pick", ramp(10))], instruction_topic=None)
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "model.safetensors").write_bytes(b"epoch 1")
    kwargs = {**SCRIPTED, "model": str(checkpoint), "reading": _options(camera_topics=(WRIST,), instruction="pick")}
    out = str(tmp_path / "out")
    assert run_replay([bag], out, **kwargs)["scored"] == 1
    assert run_replay([bag], out, **kwargs)["reused"] == 1
    (checkpoint / "model.safetensors").write_bytes(b"epoch 2, longer")  # what a finetune epoch does
    assert run_replay([bag], out, **kwargs)["scored"] == 1


def test_a_bare_mcap_file_is_a_recording_like_its_folder(tmp_path):
    import shutil
    from robo_reward_ros.replay.replay_run import run_replay
    folder = _two_episode_bag(str(tmp_path / "robot"), "mcap")
    loose = tmp_path / "loose"
    loose.mkdir()
    storage = next(p for p in os.listdir(folder) if p.endswith(".mcap"))
    shutil.copy(os.path.join(folder, storage), loose / "shift.mcap")  # no metadata.yaml beside it
    reading = _options(camera_topics=(WRIST,), instruction_topic="/task", split_gap_sec=1.0)
    by_folder = run_replay([folder], str(tmp_path / "a"), reading=reading, **SCRIPTED)
    by_file = run_replay([str(loose)], str(tmp_path / "b"), reading=reading, **SCRIPTED)
    assert (by_file["episodes"], by_file["errors"]) == (2, [])
    assert [e["name"] for e in _read(str(tmp_path / "b"), "episodes.json")["episodes"]] == [
        "shift_e000", "shift_e001"]

    def scores(out):  # what the model and monitor decided; not the episode's name or the latency
        return [{k: v for k, v in e.items() if k not in ("episode", "latency_s")}
                for e in _read(out, "estimates.jsonl")]
    assert scores(str(tmp_path / "a")) == scores(str(tmp_path / "b"))
    assert by_folder["estimates"] == by_file["estimates"] > 0
    again = run_replay([str(loose / "shift.mcap")], str(tmp_path / "b"), reading=reading, **SCRIPTED)
    assert (again["reused"], again["scored"]) == (2, 0)


def test_bad_recordings_are_named_by_bag_and_topic_and_the_run_goes_on(tmp_path, capsys):
    from robo_reward_ros.cli.replay import main
    bags = tmp_path / "bags"
    write_recording(str(bags / "a_good"), {WRIST: "jpeg", SCENE: "rgb8"}, [("pick", ramp(10))])
    write_recording(str(bags / "b_no_camera"), {"/other/image_raw": "rgb8"}, [("pick", ramp(10))])
    write_recording(str(bags / "c_unknown_encoding"), {WRIST: "jpeg", SCENE: "yuv_custom"},
                    [("pick", ramp(10))])
    write_recording(str(bags / "d_truncated"), {WRIST: "jpeg", SCENE: "rgb8"}, [("pick", ramp(60))])
    storage = next(p for p in (bags / "d_truncated").iterdir() if p.suffix == ".mcap")
    storage.write_bytes(storage.read_bytes()[: storage.stat().st_size // 2])
    out = str(tmp_path / "out")
    status = main([str(bags), "--out", out, "--camera-topic", WRIST, "--camera-topic", SCENE,
                   "--instruction-topic", "/task", "--backend", "pixel_scripted", "--model", "scripted",
                   "-p", "model.plugin_modules=scripted_backend", "--no-plots", "--quiet"])
    captured = capsys.readouterr()
    err = captured.err
    assert status == 1
    assert f"{bags / 'b_no_camera'}: camera topic {WRIST} is not in the recording" in err
    assert f"{bags / 'c_unknown_encoding'}: topic {SCENE}: none of 10 frame(s)" in err
    refused = [line for line in err.splitlines() if "refused:" in line]
    assert refused == [f"robo-reward replay: {bags / 'c_unknown_encoding'}: episode c_unknown_encoding: "
                       f"topic {SCENE}: 10 of 10 frame(s) refused: unsupported encoding 'yuv_custom' "
                       f"(supported: {refused[0].split('(supported: ', 1)[1]}"]
    assert str(bags / "d_truncated") in err
    # Each error once: not also on stdout, not twice on stderr.
    for error in _read(out, "episodes.json")["errors"]:
        assert (err + captured.out).count(error) == 1, error
    # The good bag was scored, and so was the camera that worked in the bag with a bad one.
    names = [e["name"] for e in _read(out, "episodes.json")["episodes"]]
    assert names[:2] == ["a_good", "c_unknown_encoding"]
    assert {e["camera"] for e in _read(out, "estimates.jsonl") if e["episode"] == "c_unknown_encoding"} == {
        "/wrist/image_raw"}
    assert _read(out, "episodes.json")["errors"] == [line.split("robo-reward replay: ", 1)[1]
                                                     for line in err.splitlines()
                                                     if line.startswith("robo-reward replay: ")
                                                     and line not in refused]


def test_unstamped_frames_are_counted_and_explained_and_receive_times_replace_them(tmp_path, capsys):
    # All header stamps zero replayed "successfully" into one estimate, exit 0, the reason only in
    # episodes.json.
    from robo_reward_ros.cli.replay import main
    bag = write_recording(str(tmp_path / "unstamped"), {SCENE: "rgb8"}, [("pick", ramp(20))],
                          zero_stamps=True)
    common = [bag, "--instruction-topic", "/task", "--backend", "pixel_scripted", "--model", "scripted",
              "-p", "model.plugin_modules=scripted_backend", "-p", "inference.rate_hz=2", "--no-plots",
              "--quiet"]
    status = main(common + ["--out", str(tmp_path / "header")])
    err = capsys.readouterr().err.splitlines()
    assert status == 1
    assert err == [
        f"robo-reward replay: {bag}: episode unstamped: topic {SCENE}: 19 of 20 frame(s) refused: frame has "
        f"a zero stamp: the camera driver must stamp its frames (all timing uses them)",
        f"robo-reward replay: {bag}: topic {SCENE}: only 1 of 20 frames of episode unstamped could be used; "
        f"most were refused for their stamps: if the camera driver does not stamp its frames, pass "
        f"--stamps receive to use the times the recorder received them"]
    camera = _read(str(tmp_path / "header"), "episodes.json")["episodes"][0]["cameras"]["/scene/image_raw"]
    assert camera["refusals"] == [{"count": 19, "reason": err[0].split("refused: ", 1)[1]}]

    assert main(common + ["--out", str(tmp_path / "receive"), "--stamps", "receive"]) == 0
    assert capsys.readouterr().err == ""
    episode = _read(str(tmp_path / "receive"), "episodes.json")["episodes"][0]
    assert episode["cameras"]["/scene/image_raw"]["accepted"] == 20
    estimates = _read(str(tmp_path / "receive"), "estimates.jsonl")
    assert [e["stamp"] for e in estimates] == pytest.approx([0.5, 1.0, 1.5, 1.9])
    assert estimates[-1]["progress"] == pytest.approx(1.0, abs=0.01)


def test_score_takes_one_camera_of_one_episode_of_a_bag(tmp_path, capsys, tiny_robometer_dir):
    from robo_reward_ros.cli.score import main
    bag = _two_episode_bag(str(tmp_path / "robot"), "sqlite3")
    status = main(["--model", tiny_robometer_dir, "--precision", "fp32", "--device", "cpu", "--json",
                   "--camera-topic", WRIST, "--instruction-topic", "/task", "--split-gap", "1", "--episode", "1",
                   "--sample-fps", "2", bag])
    assert status == 0
    result = json.loads(capsys.readouterr().out)
    assert result["instruction"] == "open the drawer"  # the second episode's, from the topic
    assert result["stamps"][0] == 0.0 and result["stamps"][-1] == pytest.approx(1.9)
    assert len(result["progress"]) == len(result["stamps"]) == 4  # 20 frames at 10 Hz, sampled at 2 Hz
