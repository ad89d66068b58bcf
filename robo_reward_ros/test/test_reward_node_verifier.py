# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A verifier in a real node: a planted false success is vetoed, a true one confirmed, both on the wire and in the log.

The first model (``pixel_scripted``) reads green as its success probability, the verifier
(``pixel_scripted_verifier``) reads blue: the test paints a frame the first model is unsure of
(0.7, in the band) and the verifier's answer beside it. Real rclpy; the node in its own process.
"""
import glob
import json
import os

from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Image
from std_msgs.msg import String

from robo_reward_msgs.msg import RewardStep, TaskState
from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_QOS
from ros_fixtures import SCRIPTED_ENV, reward_node_argv, spin_until
from scripted_backend import painted
from test_reward_node import Listener, rgb_image

VERIFIER = ["success.verifier.backend:=pixel_scripted_verifier", "success.verifier.band_low:=0.5",
            "success.verifier.band_high:=0.8", "success.verifier.threshold:=0.5"]


def test_a_planted_false_success_is_vetoed_and_a_true_one_confirmed(ros_node, spawn, tmp_path):
    node = spawn(reward_node_argv("inference.rate_hz:=5.0", "success.threshold:=0.65", *VERIFIER,
                                  log_dir=str(tmp_path)), env=SCRIPTED_ENV)
    processes = [node]
    listen = Listener(ros_node)
    steps = []
    ros_node.create_subscription(RewardStep, "reward_step", steps.append, EVENTS_QOS)
    camera = ros_node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
    listen.wait_until_heard(ros_node, node)
    ros_node.create_publisher(String, "instruction", LATCHED_QOS).publish(String(data="open the drawer"))
    clock = {"t": 50.0}

    def publish(success, verifier_says):
        clock["t"] += 0.1
        camera.publish(rgb_image(painted(0.6, success, blue=int(round(verifier_says * 149))), clock["t"]))

    # The first model says 0.7 (unsure), the verifier 0.1: vetoed, the episode goes on.
    spin_until(ros_node, lambda: publish(0.7, 0.1) or any(s.verifier_checked for s in steps),
               timeout=60.0, what="a step the verifier checked", processes=processes)
    vetoed = next(s for s in steps if s.verifier_checked)
    assert not vetoed.verifier_confirmed and not vetoed.terminated and not vetoed.stage_succeeded
    assert abs(vetoed.verifier_value - 0.1) < 0.01 and vetoed.verifier_backend == "pixel_scripted_verifier"
    assert vetoed.verifier_latency_sec >= 0.0
    spin_until(ros_node, lambda: listen.states and "vetoed by the verifier" in listen.states[-1].reason,
               what="the task state after the veto", processes=processes)
    assert listen.states[-1].status == TaskState.STATUS_RUNNING
    # /diagnostics come once a second: the first may predate the model.
    spin_until(ros_node, lambda: listen.diagnostic(": model", "verifier") is not None,
               what="/diagnostics of the loaded models", processes=processes)
    assert "pixel_scripted_verifier" in listen.diagnostic(": model", "verifier")
    assert "size is unknown here" in (listen.diagnostic(": model", "memory") or "")
    # Now the verifier agrees: confirmed, and the episode ends as the model decided it.
    spin_until(ros_node, lambda: publish(0.7, 0.9) or any(s.terminated for s in steps),
               timeout=60.0, what="the confirmed success's terminal step", processes=processes)
    final = next(s for s in steps if s.terminated)
    assert final.verifier_checked and final.verifier_confirmed and final.stage_succeeded
    assert abs(final.verifier_value - 0.9) < 0.01
    assert final.decided_by.source == final.decided_by.MODEL
    # Both answers are in the episode log, with the first model's value that put them in the band.
    (log,) = glob.glob(os.path.join(str(tmp_path), "episode_*.jsonl"))
    with open(log) as handle:
        records = [json.loads(line) for line in handle if '"VerifierChecked"' in line]
    assert [r["confirmed"] for r in records] == [False, True]
    assert all(abs(r["model_value"] - 0.7) < 0.01 for r in records)
    assert node.interrupt() == 0, node.output()


def test_a_verifier_that_cannot_load_fails_configure_with_the_reason(ros_node, spawn, tmp_path):
    missing = str(tmp_path / "no-such-checkpoint")
    node = spawn(reward_node_argv("success.verifier.backend:=roboreward", f"success.verifier.id:={missing}",
                                  "success.verifier.precision:=fp32", "success.verifier.device:=cpu"),
                 env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    spin_until(ros_node, lambda: "configure failed" in listen.message(": model"),
               what="the configure error in /diagnostics", processes=[node])
    assert missing in listen.message(": model"), listen.message(": model")
    assert node.interrupt() == 0, node.output()
