# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The robo-reward commands as a new user meets them: one clear line for a mistake, found early.

Before: tracebacks for a folder that is not a model (score, quantize, export-onnx), a serve that
took 15-27 s and 150 lines to say its backend name was misspelt, video-bags that kept an old bag
or dropped a second video without a word, a replay that loaded the model before finding the bag
had no instruction, and a finetune that ignored --device.
"""
import json
import os
import socket
import types

import numpy as np
import pytest

from robot_recordings import ramp, write_recording

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(capsys, *argv):
    from robo_reward_ros.cli.main import main
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def one_line(err: str, command: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"robo-reward {command}: "), err
    assert "Traceback" not in err
    return lines[0]


def images(folder, count=3):
    from PIL import Image
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        Image.new("RGB", (64, 48), (i * 40, 0, 0)).save(os.path.join(folder, f"{i:03d}.png"))
    return str(folder)


def test_a_model_mistake_is_one_line_in_every_model_command(tmp_path, capsys):
    frames = images(tmp_path / "frames")
    cases = [("score", [frames, "--model", frames, "--instruction", "x"], "no config.json; not a model directory"),
             ("score", [frames, "--model", str(tmp_path / "none"), "--instruction", "x"],
              "neither an existing directory nor a model id"),
             ("score", [frames, "--model", frames, "--instruction", "x", "--fps", "0"], "must be > 0"),
             ("quantize", ["--model", frames, str(tmp_path / "q")], "no config.json"),
             ("export-onnx", ["--model", frames, str(tmp_path / "x.onnx")], "no config.json"),
             ("export-onnx", ["--model", frames, str(tmp_path / "no" / "x.onnx")], "no such folder")]
    for command, argv, reason in cases:
        status, _, err = run(capsys, command, *argv)
        assert status != 0 and reason in one_line(err, command), (command, argv, err)


def test_serve_refuses_a_misspelt_backend_a_non_model_and_a_busy_port_before_ray_starts(tmp_path, capsys):
    from robo_reward_ros.models.loading.bundled_demo import TRAINED_MODEL_DIR
    common = ["--model", TRAINED_MODEL_DIR, "--device", "cpu"]
    status, _, err = run(capsys, "serve", "--backend", "robomter", *common)
    assert status == 2 and "unknown backend 'robomter' (known: auto, robometer" in one_line(err, "serve")
    status, _, err = run(capsys, "serve", "--backend", "robometer", "--model", str(tmp_path), "--device", "cpu")
    assert status == 2 and "no config.json; not a model directory" in one_line(err, "serve")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        status, _, err = run(capsys, "serve", "--backend", "robometer", *common, "--port", str(port))
    assert status == 2 and f"cannot listen on 127.0.0.1:{port}" in one_line(err, "serve")


def test_video_bags_says_what_it_keeps_and_refuses_what_would_ruin_a_bag(tmp_path, capsys):
    import av
    video = tmp_path / "a" / "clip.mp4"
    video.parent.mkdir()
    with av.open(str(video), "w") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(5):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), i * 40, np.uint8), format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    (tmp_path / "b").mkdir()
    os.link(video, tmp_path / "b" / "clip.mp4")
    out = str(tmp_path / "bags")
    assert run(capsys, "video-bags", out, str(video), "--instruction", "pick up the cup")[0] == 0
    status, printed, _ = run(capsys, "video-bags", out, str(video), "--instruction", "open the drawer")
    assert status == 0 and "bags/clip: exists, kept (--force writes it again)" in printed
    status, _, err = run(capsys, "video-bags", str(tmp_path / "two"), str(video), str(tmp_path / "b" / "clip.mp4"),
                         "--instruction", "one", "--instruction", "two")
    assert status == 1 and "would both be the bag" in one_line(err, "video-bags")
    for extra, reason in ((["--instruction", ""], "empty instruction"),
                          (["--instruction", "x", "--max-pixels", "0"], "--max-pixels 0: at least 1024")):
        status, _, err = run(capsys, "video-bags", str(tmp_path / "bad"), str(video), *extra)
        assert status == 1 and reason in one_line(err, "video-bags")
    precious = tmp_path / "mine" / "clip"
    precious.mkdir(parents=True)
    (precious / "notes.txt").write_text("keep me")
    status, _, err = run(capsys, "video-bags", str(tmp_path / "mine"), str(video), "--instruction", "x", "--force")
    assert status == 1 and "exists and is not a bag; not overwritten" in one_line(err, "video-bags")
    assert (precious / "notes.txt").read_text() == "keep me"


def test_replay_and_lerobot_find_bad_input_before_any_model_loads(tmp_path, capsys):
    bag = write_recording(str(tmp_path / "bag"), {"/scene/image_raw": "rgb8"}, [("pick", ramp(5))])
    absent = str(tmp_path / "no-model")  # would fail to load: these errors must come first
    status, _, err = run(capsys, "replay", bag, "--model", absent, "--out", str(tmp_path / "r"), "--quiet")
    assert status == 1 and "no instruction: pass --instruction" in one_line(err, "replay")
    status, _, err = run(capsys, "replay", bag, "--model", absent, "--instruction-topic", "/task",
                         "-p", "inference.rate_hz=abc", "--quiet")
    assert status == 1 and "parameter inference.rate_hz must be a number, got 'abc'" in one_line(err, "replay")
    from lerobot_datasets import write_v3_dataset
    dataset = write_v3_dataset(str(tmp_path / "pick"), [("pick up the cube", ramp(6))])
    status, _, err = run(capsys, "lerobot", dataset, "--model", absent, "--relabel", dataset, "--quiet")
    assert status == 1 and f"{dataset} exists: choose a new folder" in one_line(err, "lerobot")


def test_finetune_refuses_a_device_it_cannot_use(capsys):
    with pytest.raises(SystemExit) as refused:
        run(capsys, "finetune", "--model", "m", "--episodes", "e", "--out", "o", "--device", "cdua")
    assert refused.value.code == 2
    assert "invalid choice: 'cdua'" in capsys.readouterr().err


def test_score_names_the_source_frame_of_each_row_and_says_how_many_it_scored():
    from robo_reward_ros.cli.score import format_table
    frames = [types.SimpleNamespace(stamp=i * 0.5) for i in range(20)]
    output = types.SimpleNamespace(stamps=np.array([0.0, 1.5, 9.5]), progress=np.array([0.1, 0.2, 0.9]),
                                   success=None)
    lines = format_table(output, frames).splitlines()
    assert lines[0].startswith("# 3 of 20 frames scored")
    assert [line.split()[0] for line in lines[2:]] == ["0", "3", "19"]  # before: 0, 1, 2


def test_eval_without_any_known_outcome_says_to_give_labels(tmp_path, capsys):
    bag = write_recording(str(tmp_path / "bag"), {"/scene/image_raw": "rgb8"}, [("pick", ramp(8))])
    replayed = str(tmp_path / "replay")
    assert run(capsys, "replay", bag, "--out", replayed, "--instruction-topic", "/task", "--backend",
               "pixel_scripted", "--model", "scripted", "-p", "model.plugin_modules=scripted_backend",
               "--no-plots", "--quiet")[0] == 0
    status, _, err = run(capsys, "eval", replayed, "--out", str(tmp_path / "eval"), "--no-preference")
    assert status == 0 and "none of the 1 episode(s) has a known outcome" in err and "--labels FILE" in err
    assert json.load(open(tmp_path / "eval" / "metrics.json"))["labels"] is None
