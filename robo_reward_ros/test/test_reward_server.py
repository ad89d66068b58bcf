# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Robots score through one shared reward server (`robo-reward serve`, Ray Serve) on 127.0.0.1.

Real server, real reward nodes in their own processes, the tiny Robometer checkpoint: the remote
backend gives what the local backend gives (within the JPEG round trip), a server crash is the
node's usual model-error path, and bad requests are refused while the server stays up.
"""
import http.client
import json
import urllib.error
import urllib.request

import numpy as np
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from robo_reward_msgs.msg import FailureEvent, RewardEstimate
from sensor_msgs.msg import Image

from robo_reward_ros.core.stamps import to_seconds
from robo_reward_ros.node.qos_profiles import EVENTS_QOS
from reward_server_process import RewardServerProcess, server_info
from ros_fixtures import installed_executable, spin_until
from test_reward_node import rgb_image

INSTRUCTION = "put the red block on the green square"
WAIT_SEC = 90.0


@pytest.fixture(scope="module")
def reward_server(tiny_robometer_dir, tmp_path_factory):
    server = RewardServerProcess(tiny_robometer_dir, str(tmp_path_factory.mktemp("serve")))
    server.start()
    yield server
    server.kill()


def scene(step: int) -> np.ndarray:
    """Draw a smooth frame (a gradient with a block that moves), as a camera sees: what JPEG is made for."""
    y, x = np.mgrid[0:96, 0:128]
    rgb = np.stack([x * 2, y * 2, np.full_like(x, 90)], axis=-1).astype(np.uint8)
    left = 8 + 12 * step
    rgb[30:60, left:left + 24] = (200, 30, 30)
    return rgb


class Robot:
    """One reward node under a namespace, its camera publisher and what it publishes."""

    def __init__(self, ros_node, spawn, namespace, *model_params):
        self.node = spawn([installed_executable("reward_node"), "--ros-args", "-r", f"__ns:=/{namespace}",
                           "-p", 'model.preset:=""', *model_params,
                           "-p", "inference.rate_hz:=20.0", "-p", 'episode_log.directory:=""',
                           "-p", "cameras.qos.reliability:=reliable", "-p", f"instruction:={INSTRUCTION}",
                           "-p", "inference.error_report_after:=3", "-p", "inference.error_backoff_sec:=0.05",
                           "-p", "inference.error_backoff_max_sec:=0.5"], name=namespace)
        self.camera = ros_node.create_publisher(Image, f"/{namespace}/camera/image_raw",
                                                QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
        self.estimates, self.failures = [], []
        ros_node.create_subscription(RewardEstimate, f"/{namespace}/reward", self.estimates.append, EVENTS_QOS)
        ros_node.create_subscription(FailureEvent, f"/{namespace}/failure_events", self.failures.append,
                                     EVENTS_QOS)

    def estimate_at(self, stamp):
        return next((e for e in self.estimates if abs(to_seconds(e.header.stamp) - stamp) < 1e-6), None)

    def model_errors(self):
        return [f for f in self.failures if f.kind == FailureEvent.KIND_MODEL_ERROR]


def remote(url):
    return ("-p", "model.backend:=remote", "-p", f"model.id:={url}")


def publish_until(ros_node, robots, frame, condition, what):
    spin_until(ros_node, lambda: [r.camera.publish(frame) for r in robots] and condition(), timeout=WAIT_SEC,
               what=what, processes=[r.node for r in robots])


def test_two_robots_through_one_server_score_as_the_local_backend(ros_node, spawn, reward_server,
                                                                  tiny_robometer_dir):
    first = Robot(ros_node, spawn, "robot1", *remote(reward_server.url))
    second = Robot(ros_node, spawn, "robot2", *remote(reward_server.url))
    local = Robot(ros_node, spawn, "local", "-p", "model.backend:=robometer", "-p", f"model.id:={tiny_robometer_dir}",
                  "-p", "model.precision:=fp32", "-p", "model.device:=cpu")
    robots = [first, second, local]
    stamps = [100.0 + 0.5 * step for step in range(6)]
    # Each frame goes to every robot, the next only when all three scored it: the same windows.
    for step, stamp in enumerate(stamps):
        frame = rgb_image(scene(step), stamp)
        publish_until(ros_node, robots, frame, lambda s=stamp: all(r.estimate_at(s) for r in robots),
                      f"all three robots to score the frame at {stamp}")
    remote_vs_local, remote_vs_remote = 0.0, 0.0
    for stamp in stamps:
        a, b, reference = (r.estimate_at(stamp) for r in robots)
        assert [to_seconds(t) for t in a.frame_stamps] == [to_seconds(t) for t in reference.frame_stamps]
        assert [to_seconds(t) for t in b.frame_stamps] == [to_seconds(t) for t in reference.frame_stamps]
        remote_vs_local = max(remote_vs_local, float(np.abs(np.subtract(a.frame_progress,
                                                                        reference.frame_progress)).max()))
        remote_vs_remote = max(remote_vs_remote, float(np.abs(np.subtract(a.frame_progress,
                                                                          b.frame_progress)).max()))
        assert a.has_success_probability and reference.has_success_probability
        assert abs(a.success_probability - reference.success_probability) < 0.05
    print(f"max |progress remote - local| = {remote_vs_local:.5f}, "
          f"max |progress robot1 - robot2| = {remote_vs_remote:.6f} over {len(stamps)} windows")
    assert remote_vs_remote < 1e-4  # the same JPEG frames, one model
    assert remote_vs_local < 0.05  # JPEG quality 90 on 128x96 camera-like frames
    assert first.estimates[-1].backend == "remote:robometer"
    for robot in robots:
        assert not robot.model_errors()
        assert robot.node.interrupt() == 0, robot.node.output()


def post(url, body: bytes, path="/score"):
    request = urllib.request.Request(url + path, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_oversized_and_malformed_requests_are_refused_and_the_server_stays_up(reward_server):
    from robo_reward_ros.models.reward_model import Frame
    from robo_reward_ros.models.remote import wire
    url = reward_server.url
    limit = server_info(url)["max_request_bytes"]
    # Refused from its declared length, before the body is read.
    connection = http.client.HTTPConnection("127.0.0.1", reward_server.port, timeout=30)
    connection.putrequest("POST", "/score")
    connection.putheader("Content-Length", str(limit + 1))
    connection.endheaders(b"{")
    response = connection.getresponse()
    assert response.status == 413 and "limit" in json.loads(response.read())["error"]
    connection.close()
    # Without a length (chunked): read up to the limit, then refused; the client may see the refusal
    # or the connection closed under the rest of its body.
    connection = http.client.HTTPConnection("127.0.0.1", reward_server.port, timeout=30)
    try:
        connection.request("POST", "/score", body=iter([b"0" * 65536] * (limit // 65536 + 2)),
                           encode_chunked=True)
        assert connection.getresponse().status == 413
    except (BrokenPipeError, ConnectionResetError):
        pass
    connection.close()
    assert post(url, b"{not json")[0] == 400
    assert post(url, json.dumps({"instruction": "x", "clips": "no"}).encode())[0] == 400
    status, answer = post(url, json.dumps({"instruction": "x", "clips": [[{"stamp": 1.0,
                                                                           "jpeg": "AAAA"}]]}).encode())
    assert status == 400 and "JPEG" in answer["error"]
    assert post(url, json.dumps({"instruction": "", "clips": []}).encode())[0] == 400
    assert post(url, b"{}", path="/admin")[0] == 404
    good = {"instruction": INSTRUCTION, "clips": [wire.encode_clip([Frame(1.0, scene(0)), Frame(1.5, scene(1))])]}
    status, answer = post(url, json.dumps(good).encode())
    assert status == 200 and len(answer["outputs"][0]["progress"]) == 2


def test_server_killed_mid_episode_is_one_model_error_then_scoring_resumes(ros_node, spawn, reward_server):
    robot = Robot(ros_node, spawn, "robot3", *remote(reward_server.url))
    clock = {"stamp": 200.0, "step": 0}

    def next_frame():
        clock["stamp"] += 0.2
        clock["step"] = (clock["step"] + 1) % 8
        return rgb_image(scene(clock["step"]), clock["stamp"])

    def publish_until_(condition, what):
        spin_until(ros_node, lambda: robot.camera.publish(next_frame()) or condition(), timeout=WAIT_SEC,
                   what=what, processes=[robot.node])

    publish_until_(lambda: len(robot.estimates) >= 2, "estimates through the server")
    killed_after = clock["stamp"]  # frames up to this one may still be scored by the server
    reward_server.kill()
    publish_until_(lambda: robot.model_errors(), "a model-error event while the server is down")
    event = robot.model_errors()[0]
    assert "reward server" in event.description and not event.task_failure and not event.terminal
    restarted_with = clock["stamp"]  # no frame is published while the server starts
    reward_server.start()
    restarted_at = len(robot.estimates)
    publish_until_(lambda: len(robot.estimates) > restarted_at + 1, "scoring to resume after the restart")
    assert len(robot.model_errors()) == 1, [f.description for f in robot.failures]
    made_up = [to_seconds(e.header.stamp) for e in robot.estimates
               if killed_after + 1e-6 < to_seconds(e.header.stamp) < restarted_with - 1e-6]  # ns rounding
    assert not made_up, f"estimates for frames that arrived while the server was down: {made_up}"
    assert robot.node.interrupt() == 0, robot.node.output()
