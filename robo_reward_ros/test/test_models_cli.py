# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
import json
import os

from PIL import Image

from model_fixtures import make_frames
from robo_reward_ros.cli.score import main


def _write_frames(directory, count):
    os.makedirs(directory)
    for index, frame in enumerate(make_frames(count, height=96, width=128, seed=12)):
        Image.fromarray(frame.rgb).save(os.path.join(directory, f"frame_{index:03d}.png"))
    return directory


def test_score_prints_a_per_frame_table(tiny_robometer_dir, tmp_path, capsys):
    frames_dir = _write_frames(str(tmp_path / "frames"), 5)
    assert main(["--model", tiny_robometer_dir, "--instruction", "stack", "--precision", "fp32", "--device", "cpu",
                 frames_dir]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split() == ["frame", "stamp_s", "progress", "success"]
    assert len(lines) == 1 + 5
    assert lines[-1].split()[1] == "2.000"  # 5th frame at the default 2 fps


def test_score_json(tiny_qwen3vl_dir, tmp_path, capsys):
    frames_dir = _write_frames(str(tmp_path / "frames"), 3)
    assert main(["--model", tiny_qwen3vl_dir, "--backend", "topreward", "--instruction", "stack", "--precision",
                 "fp32", "--device", "cpu", "--json", frames_dir]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backend"] == "topreward" and len(data["progress"]) == 3 and data["success"] is None
    assert all(0.0 <= p <= 1.0 for p in data["progress"])
