# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Make this venv's rclpy look like Humble's to the reward node (PYTHONPATH=<this folder>).

What the node's compatibility module covers is taken away: the ``rclpy.event_handler`` module
(Iron on; Humble has ``rclpy.qos_event``) and ``Node.add_post_set_parameters_callback`` (Iron
on). rclpy's own modules are imported first, so they keep working; only later imports, the
node's, see Humble's API.
"""
import importlib.abc
import sys

import rclpy.executors  # noqa: F401
import rclpy.lifecycle  # noqa: F401
import rclpy.node
import rclpy.qos_event  # noqa: F401  (Humble's module, which the node must fall back to)


class _NotInHumble(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "rclpy.event_handler":
            raise ModuleNotFoundError("No module named 'rclpy.event_handler' (Humble)", name=name)
        return None


sys.modules.pop("rclpy.event_handler", None)
if hasattr(rclpy, "event_handler"):
    delattr(rclpy, "event_handler")
sys.meta_path.insert(0, _NotInHumble())
del rclpy.node.Node.add_post_set_parameters_callback
print("humble_rclpy: rclpy.event_handler and Node.add_post_set_parameters_callback hidden",
      file=sys.stderr, flush=True)
