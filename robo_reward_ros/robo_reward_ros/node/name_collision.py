# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Another node with this node's fully qualified name in the same ROS domain: the younger one stops.

ROS 2 lets two nodes share a name (``ros2 node list`` only warns), and for this node that is
always a mistake: both publish on /reward, their episodes interleave, and one ``set_task``
changes both. Each node announces itself on ``~/instance`` (latched: host, process, start time);
both twins hear each other as soon as discovery has matched them (seconds on a loaded machine),
and the one started later refuses to configure, or deactivates if it already ran, saying why.
The older one goes on and says in its log and /diagnostics that a twin appeared.
"""
from __future__ import annotations

import json
import os
import socket
import time
from typing import Callable

from rclpy.node import Node
from std_msgs.msg import String

from robo_reward_ros.node.qos_profiles import LATCHED_LISTENER_QOS, LATCHED_QOS


class TwinWatch:
    """Announce this node; call ``on_younger_twin`` / ``on_older_twin`` with a reason when one is heard."""

    def __init__(self, node: Node, on_younger_twin: Callable[[str], None],
                 on_older_twin: Callable[[str], None]) -> None:
        self._node = node
        self._me = {"host": socket.gethostname(), "pid": os.getpid(), "started_ns": time.time_ns()}
        self._on_younger, self._on_older = on_younger_twin, on_older_twin
        self.problem = ""  # set when this node is the younger twin
        self._heard = set()
        self._publisher = node.create_publisher(String, "~/instance", LATCHED_QOS)
        node.create_subscription(String, "~/instance", self._on_instance, LATCHED_LISTENER_QOS)
        self._publisher.publish(String(data=json.dumps(self._me)))

    def _on_instance(self, msg: String) -> None:
        try:
            other = json.loads(msg.data)
            key = (str(other["host"]), int(other["pid"]), int(other["started_ns"]))
        except (ValueError, KeyError, TypeError):
            return  # not one of ours
        if key == (self._me["host"], self._me["pid"], self._me["started_ns"]) or key in self._heard:
            return
        self._heard.add(key)
        name = self._node.get_fully_qualified_name()
        where = f"process {key[1]} on {key[0]}"
        if (key[2], key[1]) < (self._me["started_ns"], self._me["pid"]):
            domain = os.environ.get("ROS_DOMAIN_ID", "0")
            self.problem = (
                f"another node named {name} ({where}) already runs in ROS domain {domain}: "
                f"both would publish on the same topics, their episodes interleaved, and obey the "
                f"same set_task. Give this one another name or namespace (--ros-args -r "
                f"__node:=NAME, or -r __ns:=/robot2)")
            self._on_younger(self.problem)
        else:
            self._on_older(f"another node named {name} ({where}) started in this ROS domain after "
                           f"this one; it stops (same name), this one goes on")


def wait_for_twin(watch: TwinWatch, created_at: float, grace_sec: float) -> str:
    """Give discovery until ``grace_sec`` after ``created_at`` to bring a twin's announcement; its reason or ""."""
    while not watch.problem and time.monotonic() < created_at + grace_sec:
        time.sleep(0.05)  # the subscription is served by another executor thread meanwhile
    return watch.problem
