# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``operator_overlay``: the installed node draws the reward node's view on the newest frame.

It publishes it raw and as JPEG. The test process plays the camera and the reward node's outputs
(real messages on the real topics); the overlay runs as its own process, as beside the reward node.
"""
import io

import numpy as np
import pytest

from ros_fixtures import installed_executable, spin_until
from scripted_backend import painted


def test_draw_overlay_keeps_the_frame_and_fills_the_bars_to_the_values():
    from robo_reward_ros.core.operator_overlay import BAR_COLOUR, OverlayState, draw_overlay
    frame = painted(0.5, 0.5, (240, 480))
    state = OverlayState("pick up the cube", 0, 2, "running", 0.25, None, "stall: stuck near 0.25")
    drawn = draw_overlay(frame, state)
    assert drawn.shape == (240, 480, 3)
    assert np.array_equal(drawn[120, 240], frame[120, 240])  # the middle of the scene is untouched
    green = np.all(drawn == BAR_COLOUR, axis=2)
    rows = np.nonzero(green.any(axis=1))[0]
    columns = np.nonzero(green[rows[len(rows) // 2]])[0]
    bar_left, bar_right = 6 + 12 * 8, 480 - 6
    assert (columns[-1] - bar_left) / (bar_right - bar_left) == pytest.approx(0.25, abs=0.02)
    small = draw_overlay(painted(0.1, 0.1, (24, 32)), state)
    assert small.shape[1] == 480  # a small frame is scaled up so the text is legible


def test_the_node_publishes_the_overlay_raw_and_compressed_and_survives_a_bad_frame(ros_node, spawn):
    from PIL import Image as PILImage
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import CompressedImage, Image
    from robo_reward_msgs.msg import FailureEvent, RewardEstimate, TaskState
    from robo_reward_ros.core.operator_overlay import OverlayState, draw_overlay
    from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_QOS
    process = spawn([installed_executable("operator_overlay"), "--ros-args", "-p", "rate_hz:=20.0"])
    camera = ros_node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
    estimates = ros_node.create_publisher(RewardEstimate, "reward", EVENTS_QOS)
    states = ros_node.create_publisher(TaskState, "task_state", LATCHED_QOS)
    failures = ros_node.create_publisher(FailureEvent, "failure_events", EVENTS_QOS)
    raw, jpeg = [], []
    ros_node.create_subscription(Image, "overlay/image_raw", raw.append, 10)
    ros_node.create_subscription(CompressedImage, "overlay/image_raw/compressed", jpeg.append, 10)
    publishers = (camera, estimates, states, failures)
    spin_until(ros_node, lambda: all(p.get_subscription_count() > 0 for p in publishers)
               and ros_node.count_publishers("overlay/image_raw") > 0, what="discovery", processes=[process])

    frame = painted(0.4, 0.6, (120, 160))
    bad = Image(height=120, width=160, encoding="yuv_custom", step=480, data=frame.tobytes())

    def bad_frame_logged():
        camera.publish(bad)  # best effort, as camera drivers publish: repeated until one arrives
        return "frame skipped" in process.output()

    spin_until(ros_node, bad_frame_logged, what="the bad frame's log line", processes=[process])

    states.publish(TaskState(episode_id="e1", stage_index=1, stage_count=2, instruction="open the drawer",
                             status=TaskState.STATUS_RUNNING))
    estimates.publish(RewardEstimate(camera="camera/image_raw", progress=0.75, has_success_probability=True,
                                     success_probability=0.3))
    failures.publish(FailureEvent(kind=FailureEvent.KIND_STALL, description="no progress for 15 s"))
    expected = draw_overlay(frame, OverlayState("open the drawer", 1, 2, "running", 0.75, 0.3,
                                                "stall: no progress for 15 s"))
    good = Image(height=120, width=160, encoding="rgb8", step=480, data=frame.tobytes())

    def drawn_as_expected():
        camera.publish(good)  # a new frame each time: the overlay draws only new frames
        return any(np.array_equal(np.frombuffer(bytes(m.data), np.uint8).reshape(m.height, m.width, 3), expected)
                   for m in raw)

    spin_until(ros_node, drawn_as_expected, what="the overlay of the newest state", processes=[process])
    spin_until(ros_node, lambda: len(jpeg) > 0, what="the compressed overlay", processes=[process])
    decoded = np.asarray(PILImage.open(io.BytesIO(bytes(jpeg[-1].data))).convert("RGB"))
    assert jpeg[-1].format.startswith("rgb8; jpeg") and decoded.shape == expected.shape
    assert np.abs(decoded.astype(int) - expected.astype(int)).mean() < 8
    assert process.popen.poll() is None
