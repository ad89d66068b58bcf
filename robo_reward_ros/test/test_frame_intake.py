# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The one way frames enter the pipeline (node and replay alike), without ROS."""
import numpy as np

from robo_reward_ros.core.events import EpisodeEnded, EpisodeStarted, FailureKind
from robo_reward_ros.core.frame_intake import FrameIntake, ManualClock
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.reward_pipeline import RewardPipeline, WindowConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task
from scripted_backend import PixelScriptedBackend, painted


def make(max_pixels=64 * 64, confirm=3):
    clock = ManualClock(100.0)
    config = MonitorConfig(camera_stale_after_s=2.0, episode_timeout_s=60.0, gaps_are_outages=False)
    pipeline = RewardPipeline(PixelScriptedBackend(), TaskMonitor(config), ("front",),
                              WindowConfig(max_frames=8, min_interval_sec=0.0))
    intake = FrameIntake(pipeline, max_pixels, max_stamp_jump_sec=5.0, new_timeline_frames=confirm,
                         clock=clock)
    return intake, pipeline, clock


def events(updates):
    return [e for u in updates for e in u.events]


def test_raw_and_decoded_frames_enter_the_window_alike():
    """The node hands message fields, the replay decoded pixels: the same frame either way."""
    rgb = np.random.default_rng(0).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    live, live_pipeline, _ = make()
    offline, offline_pipeline, _ = make()
    assert live.receive_raw("front", 1.0, "rgb8", 120, 160, 160 * 3, rgb.tobytes()).accepted
    assert offline.receive_rgb("front", 1.0, rgb).accepted
    a, b = live_pipeline.windows["front"].snapshot(), offline_pipeline.windows["front"].snapshot()
    assert a[0].rgb.shape[0] * a[0].rgb.shape[1] <= 64 * 64  # downscaled to max_pixels
    np.testing.assert_array_equal(a[0].rgb, b[0].rgb)


def test_refused_frames_are_counted_with_the_reason_and_the_stream_goes_on():
    intake, pipeline, _ = make()
    assert intake.receive_rgb("front", 10.0, painted(0.2, 0.0)).accepted
    back = intake.receive_rgb("front", 9.0, painted(0.2, 0.0))
    assert not back.accepted and "went back" in back.rejected_because
    bad = intake.receive_raw("front", 10.1, "bayer_rggb8", 2, 2, 2, bytes(4))
    assert not bad.accepted and "unsupported encoding" in bad.rejected_because
    assert intake.receive_rgb("front", 10.2, painted(0.2, 0.0)).accepted
    stats = intake.stats["front"]
    assert (stats.received, stats.accepted, stats.rejected) == (4, 2, 2)
    assert "unsupported encoding" in stats.last_error
    assert [f.stamp for f in pipeline.windows["front"].snapshot()] == [10.0, 10.2]


def test_a_waiting_episode_starts_with_the_first_accepted_frame():
    intake, pipeline, _ = make()
    pipeline.set_task(build_task(["stack the cups"]), None, start=True, episode_id="e1")
    result = intake.receive_rgb("front", 5.0, painted(0.2, 0.0))
    assert [type(e) for e in events(result.updates)] == [EpisodeStarted]
    assert pipeline.state.episode_id == "e1" and pipeline.monitor.running


def test_a_camera_clock_that_changes_for_good_restarts_the_episode():
    intake, pipeline, _ = make(confirm=3)
    pipeline.set_task(build_task(["stack the cups"]), None, start=True, episode_id="e1")
    intake.receive_rgb("front", 50.0, painted(0.2, 0.0))
    results = [intake.receive_rgb("front", stamp, painted(0.2, 0.0)) for stamp in (1.0, 1.1, 1.2)]
    assert [r.accepted for r in results] == [False, False, True]
    assert "camera clock changed" in results[-1].new_timeline
    kinds = [type(e) for e in events(results[-1].updates)]
    assert kinds == [EpisodeEnded, EpisodeStarted]
    assert pipeline.state.episode_id != "e1" and pipeline.state.episode_start_stamp == 1.2


def test_frame_time_runs_on_while_the_camera_is_silent_and_stale_is_reported_once():
    intake, pipeline, clock = make()
    assert intake.frame_time() is None and intake.tick() == []  # no clock before a frame
    pipeline.set_task(build_task(["stack the cups"]), None, start=True)
    intake.receive_rgb("front", 7.0, painted(0.2, 0.0))
    clock.now += 1.5
    assert intake.frame_time() == 8.5 and intake.tick() == []
    clock.now += 1.0  # 2.5 s without a frame
    stale = events(intake.tick())
    assert [e.kind for e in stale] == [FailureKind.CAMERA_STALE] and stale[0].camera == "front"
    clock.now += 1.0
    assert intake.tick() == []  # once per silent period
    intake.receive_rgb("front", 10.0, painted(0.2, 0.0))
    assert pipeline.step().results  # back: its estimate resumes the camera in the monitor
    clock.now += 3.0
    assert [e.kind for e in events(intake.tick())] == [FailureKind.CAMERA_STALE]


def test_a_camera_whose_every_frame_is_refused_is_stale_with_the_reason():
    """Before: unsupported frames for 8 s kept the camera "receiving at 10 Hz", and no event came."""
    from robo_reward_ros.node.diagnostics import OK, WARN, camera_status
    intake, pipeline, clock = make()
    pipeline.set_task(build_task(["stack the cups"]), None, start=True)
    intake.receive_rgb("front", 7.0, painted(0.2, 0.0))
    stats = intake.stats["front"]
    assert camera_status("n", stats, clock.now, 10.0, 1, 8, 2.0).level == OK
    found = []
    for tick in range(1, 31):  # 3 s of frames at 10 Hz, every one in an encoding no decoder knows
        clock.now += 0.1
        intake.receive_raw("front", 7.0 + tick * 0.1, "yuv422", 2, 2, 4, bytes(8))
        found += events(intake.tick())
    assert [e.kind for e in found] == [FailureKind.CAMERA_STALE]  # once, after the 2 s stale limit
    assert "delivered no usable frame for 2.1 s (21 frame(s) came and were refused: unsupported " \
           "encoding 'yuv422'" in found[0].description
    report = camera_status("n", stats, clock.now, 10.0, 1, 8, 2.0)
    assert report.level == WARN
    assert report.message.startswith("no usable frame for 3.0 s: 30 frame(s) came and were refused")
    clock.now += 0.1
    intake.receive_rgb("front", 10.1, painted(0.2, 0.0))  # a good frame: healthy again
    report = camera_status("n", stats, clock.now, 10.0, 1, 8, 2.0)
    assert report.level == OK, report.message
    assert stats.refused_since_accepted == 0 and not stats.stale_reported


def test_publishers_that_send_nothing_point_to_the_restart_trap_and_no_publisher_does_not():
    """A node restarted after SIGKILL can be deaf to publishers that outlived it (Fast DDS)."""
    from robo_reward_ros.node.diagnostics import WARN, camera_status
    intake, pipeline, clock = make()
    stats = intake.stats["front"]
    report = camera_status("n", stats, clock.now, 0.0, 0, 8, 2.0, publishers=2)
    assert report.level == WARN
    assert report.message.startswith("no frame received yet although 2 publisher(s) are on the topic")
    assert "docs/troubleshooting.md" in report.message
    assert {v.key: v.value for v in report.values}["publishers"] == "2"
    for publishers in (0, None):
        assert camera_status("n", stats, clock.now, 0.0, 0, 8, 2.0,
                             publishers=publishers).message == "no frame received yet"
    intake.receive_rgb("front", 7.0, painted(0.2, 0.0))
    clock.now += 3.0  # frames came, then stopped: stale, with publishers still there
    report = camera_status("n", stats, clock.now, 0.0, 1, 8, 2.0, publishers=1)
    assert report.message.startswith("stale: no frame for 3.0 s although 1 publisher(s)")


def test_a_negative_stamp_is_named_as_negative_not_zero():
    intake, _, _ = make()
    result = intake.receive_rgb("front", -1.5, painted(0.2, 0.0))
    assert result.rejected_because.startswith("frame has a negative stamp (-1.500 s)")
