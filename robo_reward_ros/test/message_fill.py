# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Deterministic, non-default values for every field of any ROS message type.

A round trip then compares real content (nested messages, arrays, UTF-8 strings), not defaults.
"""
from __future__ import annotations

import importlib
import inspect
from typing import Any, List

from rosidl_parser.definition import (AbstractNestedType, AbstractString, Array, BasicType,
                                      NamespacedType)

_FLOATS = {"float", "double", "long double"}
_UNSIGNED_MAX = {"uint8": 255, "octet": 255, "char": 127, "uint16": 65535,
                 "uint32": 2**32 - 1, "uint64": 2**64 - 1}


def interface_classes(module) -> List[type]:
    """Return the message types (of a ``.msg`` module) or service types (of a ``.srv`` module)."""
    classes = [cls for _, cls in inspect.getmembers(module, inspect.isclass)]
    services = [cls for cls in classes if hasattr(cls, "Request")]
    return services or [cls for cls in classes if hasattr(cls, "SLOT_TYPES")]


def filled(cls: type, seed: int) -> Any:
    msg = cls()
    for index, (name, slot) in enumerate(zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES)):
        setattr(msg, name, _value(slot, seed * 7 + index))
    return msg


def _value(slot, seed: int) -> Any:
    if isinstance(slot, BasicType):
        kind = slot.typename
        if kind == "boolean":
            return seed % 2 == 0
        if kind in _FLOATS:
            return seed + 0.25
        if kind == "octet":
            return bytes([1 + seed % 200])
        if kind in _UNSIGNED_MAX:
            return 1 + seed % min(200, _UNSIGNED_MAX[kind])
        return (-1) ** seed * (1 + seed % 100)
    if isinstance(slot, AbstractString):
        return f"text {seed} – ünïcode"
    if isinstance(slot, NamespacedType):
        module = importlib.import_module(".".join(slot.namespaces))
        return filled(getattr(module, slot.name), seed)
    if isinstance(slot, AbstractNestedType):
        length = slot.size if isinstance(slot, Array) else 3
        items = [_value(slot.value_type, seed + i) for i in range(length)]
        if isinstance(slot.value_type, BasicType) and slot.value_type.typename == "octet":
            return [item for item in items]
        return items
    raise TypeError(f"no filler for {slot!r}")
