# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``CameraRecorder``: the frames a controller published, as a bag the offline tools read back exactly."""
import numpy as np
import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")


def test_recorded_frames_read_back_with_their_header_stamps_and_pixels(tmp_path):
    from robo_reward_ros.core.stamps import split_seconds
    from robo_reward_ros.recordings.camera_recorder import CameraRecorder
    from robo_reward_ros.recordings.robot_recording import RecordingOptions, read_recording, decoded_episodes
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (24, 32, 3), dtype=np.uint8) for _ in range(5)]
    stamps = [1796526000.123456789 + 0.1 * k for k in range(5)]
    with CameraRecorder(str(tmp_path / "rollouts")) as recorder:
        for stamp, rgb in zip(stamps, frames):
            recorder.write(stamp, rgb)
    assert recorder.frames == 5
    options = RecordingOptions(instruction="close the drawer")  # the node's episode logs name it
    store_stamps = []
    for recorded in read_recording(str(tmp_path / "rollouts"), options):
        assert recorded.camera_topics == ("/camera/image_raw",)
        store_stamps += [message.log_ns for message in recorded.messages]
    # Header and log time alike, each as the published header has it (the node logs those).
    assert store_stamps == [sec * 10**9 + nanosec for sec, nanosec in map(split_seconds, stamps)]
    (_, decoded), = list(decoded_episodes(str(tmp_path / "rollouts"), options, max_pixels=10**6))
    assert all(np.array_equal(a.rgb, b) for a, b in zip(decoded, frames))
    assert decoded[-1].stamp == pytest.approx(0.4, abs=1e-6)
    with pytest.raises(FileExistsError):  # a recording is never appended to or replaced
        CameraRecorder(str(tmp_path / "rollouts"))
