# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Frames lost where the transport does not say so are reported from the camera's stamps (issue 20)."""
import numpy as np

from ros_fixtures import SCRIPTED_ENV, reward_node_argv, spin_until
from test_reward_node import Listener
from test_reward_node_faults import Camera


def test_frames_that_never_arrive_are_estimated_from_the_stamps_in_diagnostics(ros_node, spawn,
                                                                               tmp_path):
    node = spawn(reward_node_argv("instruction:=stack the cups", "diagnostics_period_sec:=0.2",
                                  log_dir=str(tmp_path)), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    rng = np.random.default_rng(3)

    def camera_losing_half():
        camera.stamp += 0.05  # the camera stamps every frame it takes
        if rng.random() < 0.5:  # only half of them get through
            camera.pub.publish(camera.frame(step=0.0))

    spin_until(ros_node, lambda: camera_losing_half() or "never arrived" in (
        listen.message("camera camera/image_raw")), what="the estimated loss in diagnostics",
        processes=[node])
    missed = int(listen.diagnostic("camera camera/image_raw", "frames_missed_by_stamps"))
    assert missed >= 10
    assert listen.diagnostic("camera camera/image_raw", "publisher_period_sec") == "0.0500"
    assert listen.diagnostic("camera camera/image_raw", "frames_lost_in_transport") == "0"
    assert node.interrupt() == 0, node.output()
