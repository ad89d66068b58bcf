# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The installed Fast DDS profiles: a service reply waits for a new client instead of vanishing.

rmw_fastrtps drops a reply when the server's reply writer has not matched the client's reader
within the writer's max_blocking_time (100 ms by default), and the caller then waits for nothing:
CI saw it on `get_state` of a reward node still starting up. The profile raises that wait to 2 s.
"""
import os
import re
import time
import xml.etree.ElementTree as ElementTree

from rcl_interfaces.srv import ListParameters
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from fastdds_profiles import fastdds_profile_variable
from ros_fixtures import PACKAGE_ROOT, python_script, spin_until

CONFIG = os.path.join(PACKAGE_ROOT, "config")
REPLIES_PROFILE = os.path.join(CONFIG, "fastdds_service_replies.xml")


def service_reply_wait_sec(path: str) -> float:
    """Read the max_blocking_time of the "service" data_writer profile in a Fast DDS XML file."""
    namespace = {"dds": "http://www.eprosima.com"}
    writer = ElementTree.parse(path).getroot().find(
        "dds:profiles/dds:data_writer[@profile_name='service']", namespace)
    assert writer is not None, f"{path} has no data_writer profile named 'service'"
    wait = writer.find("dds:qos/dds:reliability/dds:max_blocking_time", namespace)
    return int(wait.find("dds:sec", namespace).text) + int(wait.find("dds:nanosec", namespace).text) * 1e-9


def test_both_installed_profiles_give_service_replies_the_same_wait():
    assert service_reply_wait_sec(REPLIES_PROFILE) == 2.0
    assert service_reply_wait_sec(os.path.join(CONFIG, "fastdds_shm.xml")) == 2.0


def test_the_session_runs_with_the_profile_and_the_middleware_waits_as_it_says(ros_node, spawn):
    assert os.environ[fastdds_profile_variable()] == REPLIES_PROFILE
    server = spawn(python_script("service_reply_probe.py"), name="reply_probe")
    # A reply reader that can never match the server's volatile reply writer.
    unreachable = ros_node.create_client(ListParameters, "reply_probe", qos_profile=QoSProfile(
        depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    # Its requests do reach the server. One sent before discovery is lost, so keep asking (every
    # 0.5 s) until the probe has served two: the first of them held the server on its reply.
    sent = []

    def ask_until_two_were_served():
        if not sent or time.monotonic() - sent[-1] > 0.5:
            sent.append(time.monotonic())
            unreachable.call_async(ListParameters.Request())
        return "second request served" in server.output()

    spin_until(ros_node, ask_until_two_were_served, what="the probe to serve two requests",
               processes=[server])
    held = float(re.search(r"served ([0-9.]+) s after", server.output()).group(1))
    # The first reply held the server for the profile's wait (default: 0.1 s); load only adds.
    assert held >= 1.9, server.output()
    assert server.interrupt() == 0, server.output()
