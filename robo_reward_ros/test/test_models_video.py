# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Real robot clips (shared/data/robot-clips, next to the repository) through the score command."""
import json
import os

import numpy as np
import pytest

pytest.importorskip("av")

CLIPS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared",
                                      "data", "robot-clips"))
STACK_CUP = os.path.join(CLIPS, "berkeley_rpt_stack_cup.mp4")
needs_clips = pytest.mark.skipif(not os.path.isfile(STACK_CUP), reason=f"robot clips not present at {CLIPS}")


@needs_clips
def test_read_video_decodes_every_frame_with_its_time():
    from robo_reward_ros.recordings.video_file import read_video
    frames = read_video(STACK_CUP)
    assert len(frames) == 32  # 3.2 s at 10 fps
    assert all(f.rgb.shape == (240, 320, 3) and f.rgb.dtype == np.uint8 for f in frames)
    np.testing.assert_allclose([f.stamp for f in frames], np.arange(32) / 10.0, atol=1e-6)
    assert frames[0].rgb.std() > 10  # real pixels, not a blank decode


@needs_clips
def test_sample_fps_follows_the_authors_frame_choice():
    from robo_reward_ros.recordings.video_file import read_video
    frames = read_video(STACK_CUP, sample_fps=3.0)
    expected = np.linspace(0, 31, 10, dtype=int) / 10.0  # round(32 * 3 / 10) = 10 frames, as scored upstream
    np.testing.assert_allclose([f.stamp for f in frames], expected, atol=1e-6)


def test_unreadable_video_is_a_clear_error(tmp_path):
    from robo_reward_ros.recordings.video_file import read_video
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"not a video")
    with pytest.raises(ValueError, match="broken.mp4: not a readable video"):
        read_video(str(bad))


@needs_clips
def test_score_a_robot_clip_end_to_end(tiny_robometer_dir, capsys):
    from robo_reward_ros.cli.score import main
    assert main(["--model", tiny_robometer_dir, "--instruction", "Pick up the yellow cup and stack it on the other cup",
                 "--precision", "fp32", "--device", "cpu", "--json", STACK_CUP]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backend"] == "robometer"
    stamps = np.asarray(data["stamps"])
    # Robometer selects 8 of the 32 frames by rounded linspace: first and last kept.
    np.testing.assert_allclose(stamps, np.rint(np.linspace(0, 31, 8)) / 10.0, atol=1e-6)
    assert len(data["progress"]) == len(data["success"]) == 8
    assert all(0.0 <= p <= 1.0 for p in data["progress"]) and all(0.0 < s < 1.0 for s in data["success"])
