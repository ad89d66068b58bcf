# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Health reporting runs on a steady clock, also under use_sim_time (issue 20).

With ``use_sim_time`` and no ``/clock`` (a paused or absent simulator), timers on the node's ROS
clock never fire: /diagnostics, stale-camera detection and time limits went silent.
"""
from builtin_interfaces.msg import Time
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock

from robo_reward_msgs.msg import FailureEvent
from ros_fixtures import SCRIPTED_ENV, reward_node_argv, spin_until
from test_reward_node import Listener
from test_reward_node_faults import Camera, spin_publishing


def test_diagnostics_stale_cameras_and_time_limits_run_while_sim_time_stands_still(
        ros_node, spawn, tmp_path):
    node = spawn(reward_node_argv("use_sim_time:=true", "instruction:=stack the cups",
                                  "inference.rate_hz:=20.0", "timeout.episode_sec:=1.5",
                                  "cameras.stale_after_sec:=0.5",
                                  "failure.low_progress_grace_sec:=100.0",
                                  log_dir=str(tmp_path)), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    # A simulator that is paused: /clock stands at one time.
    paused = ros_node.create_publisher(Clock, "/clock", QoSProfile(depth=1))
    paused.publish(Clock(clock=Time(sec=42)))
    spin_until(ros_node, lambda: listen.diagnostics, what="/diagnostics under a paused /clock",
               processes=[node])
    camera = Camera(ros_node)
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.3)),
                    lambda: listen.estimates, "a first estimate", node)
    # The camera stops: it is reported stale, and the episode's time limit ends it.
    spin_until(ros_node, lambda: any(f.kind == FailureEvent.KIND_CAMERA_STALE
                                     for f in listen.failures),
               what="the stale camera reported", processes=[node])
    spin_until(ros_node, lambda: listen.resets, what="the episode time limit's reset",
               processes=[node])
    assert "over its 1.5 s limit" in listen.resets[-1].reason
    assert node.interrupt() == 0, node.output()
