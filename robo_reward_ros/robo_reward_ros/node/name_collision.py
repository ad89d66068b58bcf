"""Another node with this node's fully qualified name in the same ROS domain.

ROS 2 lets two nodes share a name without a word (ros2cli only warns, in ``ros2 node list``),
and for this node that is always a mistake: both publish on /reward, their episodes interleave,
and one ``set_task`` changes both. A node started second refuses to configure; one that sees a
twin appear later says so in its log and its diagnostics.
"""
from __future__ import annotations

import os
import time

from rclpy.node import Node


def same_name_nodes(node: Node) -> int:
    """Count the other nodes of the graph with ``node``'s name and namespace."""
    me = (node.get_name(), node.get_namespace())
    return sum(1 for name, namespace in node.get_node_names_and_namespaces()
               if (name, namespace) == me) - 1


def twin_problem(node: Node, created_at: float, grace_sec: float) -> str:
    """Say why this node must not run beside another of its name, or return "".

    Discovery takes a moment (here 0.5-2.5 s on a loaded machine) before the graph lists the
    others: first wait until ``grace_sec`` after ``created_at`` (the model load runs before this).
    """
    remaining = grace_sec - (time.monotonic() - created_at)
    if remaining > 0:
        time.sleep(remaining)
    others = same_name_nodes(node)
    if not others:
        return ""
    domain = os.environ.get("ROS_DOMAIN_ID", "0")
    return (f"{others} other node(s) named {node.get_fully_qualified_name()} already run in ROS "
            f"domain {domain}: both would publish on the same topics, their episodes interleaved, "
            f"and obey the same set_task. Give this one another name or namespace (--ros-args -r "
            f"__node:=NAME, or -r __ns:=/robot2)")
