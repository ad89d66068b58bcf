# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Declares the reward node's parameters (the table in settings/node_settings.py) with ROS descriptors.

Ranges, read-only flags, descriptions that `ros2 param describe` shows.
"""
from __future__ import annotations

import difflib
from typing import Any, Dict, List

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node

from robo_reward_ros.settings.parameter_table import SPECS, ParamSpec


def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    result = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if spec.low is None:
        return result
    if isinstance(spec.default, int):
        result.integer_range = [IntegerRange(
            from_value=int(spec.low), to_value=int(spec.high), step=1)]
    else:
        result.floating_point_range = [FloatingPointRange(
            from_value=float(spec.low), to_value=float(spec.high), step=0.0)]
    return result


def declare_parameters(node: Node) -> List[str]:
    """Declare every parameter.

    A start-up value rclpy refuses (out of its range, wrong type) does not kill the node: the
    default is declared instead and the refusal is returned, so configure can fail with it and
    /diagnostics can show it.
    """
    refused = []
    for spec in SPECS:
        if node.has_parameter(spec.name):
            continue
        try:
            node.declare_parameter(spec.name, spec.default, descriptor(spec))
        except (InvalidParameterValueException, InvalidParameterTypeException) as exc:
            refused.append(f"parameter {spec.name}: {exc}")
            node.declare_parameter(spec.name, spec.default, descriptor(spec),
                                   ignore_override=True)
    return refused + unknown_parameters(node)


# Parameters rclpy itself declares or reads; any other name the node was given is a mistake.
ROS_OWN_PARAMETERS = ("use_sim_time", "start_type_description_service")


def unknown_parameters(node: Node) -> List[str]:
    """Name each start-up parameter (params file, ``-p``) the node does not have, with the nearest known name.

    rclpy keeps such values without a word (``succes.threshold`` for ``success.threshold``);
    configure refuses them instead, so a typo cannot leave the default silently in force. rclpy
    holds the start-up values in ``_parameter_overrides`` (the same on Humble, Jazzy and Kilted).
    """
    known = [spec.name for spec in SPECS]
    given = getattr(node, "_parameter_overrides", {}) or {}
    refused = []
    for name in sorted(given):
        if name in known or name in ROS_OWN_PARAMETERS or name.startswith("qos_overrides."):
            continue
        nearest = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        refused.append(f"unknown parameter {name}" + (f" (did you mean {nearest[0]}?)" if nearest
                                                      else " (ros2 param list shows the known ones)"))
    return refused


def current_values(node: Node) -> Dict[str, Any]:
    return {spec.name: node.get_parameter(spec.name).value for spec in SPECS}
