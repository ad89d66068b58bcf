# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A robot controller whose reset service takes calls but never answers (a hung controller), in its own process.

Prints one line per call so the test can count them.
"""
import sys
import threading

import rclpy
from std_srvs.srv import Trigger


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("stuck_controller")
    calls = []

    def hang(request, response):
        calls.append(1)
        print(f"reset call {len(calls)}", flush=True)
        threading.Event().wait()  # never returns: the executor is stuck with it
        return response

    node.create_service(Trigger, "stuck/reset", hang)
    rclpy.spin(node)
    return 0


if __name__ == "__main__":
    sys.exit(main())
