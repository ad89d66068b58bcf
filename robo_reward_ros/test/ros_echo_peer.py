# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The other side of the message round-trip test, in its own process.

It republishes every robo_reward_msgs message it receives and answers every service with a reply
derived from the request, so the test sees both directions cross a process boundary.
"""
import sys

import rclpy
import robo_reward_msgs.msg
import robo_reward_msgs.srv
from rclpy.executors import ExternalShutdownException
from rclpy.serialization import serialize_message

from message_fill import filled, interface_classes


def reply_seed(request) -> int:
    return len(serialize_message(request))


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("robo_reward_echo_peer")
    keep = []
    for cls in interface_classes(robo_reward_msgs.msg):
        publisher = node.create_publisher(cls, f"roundtrip/out/{cls.__name__}", 10)
        keep.append(node.create_subscription(
            cls, f"roundtrip/in/{cls.__name__}", lambda msg, p=publisher: p.publish(msg), 10))
    for srv in interface_classes(robo_reward_msgs.srv):
        def answer(request, response, srv=srv):
            return filled(srv.Response, reply_seed(request))
        keep.append(node.create_service(srv, f"roundtrip/{srv.__name__}", answer))
    return spin_until_stopped(node)


def spin_until_stopped(node) -> int:
    """Serve until SIGINT or the context's shutdown, then leave cleanly (exit status 0)."""
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
