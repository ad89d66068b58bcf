# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A service server that says how long the middleware held it on a reply nobody could take.

The test's client asks for replies its reader can never match (transient-local against the
server's volatile writer), twice; rclpy sends a reply right after its callback, so the second
callback starts once the first reply's wait in rmw_fastrtps has run out.
"""
import time

import rclpy
from rcl_interfaces.srv import ListParameters

from ros_echo_peer import spin_until_stopped


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("service_reply_probe")
    starts = []

    def answer(request, response):
        starts.append(time.monotonic())
        if len(starts) == 2:
            print(f"second request served {starts[1] - starts[0]:.3f} s after the first",
                  flush=True)
        return response

    node.create_service(ListParameters, "reply_probe", answer)
    return spin_until_stopped(node)


if __name__ == "__main__":
    raise SystemExit(main())
