# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The package's rooms import downward only, in no circle, with function-level imports counted.

A lazy import inside a function is still a dependency: it hid the demo -> live replay -> demo
circle for months. Each room (a sub-package, or a top-level module) has a layer; a module may
import its own room and the rooms of lower layers. rclpy belongs to the ROS rooms alone, and a
private name (``_x``) is never taken from another room.
"""
import ast
import os

import networkx
import pytest

from ros_fixtures import PACKAGE_ROOT

PACKAGE = "robo_reward_ros"
SOURCE = os.path.join(PACKAGE_ROOT, PACKAGE)
# Lowest first. A room may import rooms of its own layer or below; two rooms of one layer may not
# import each other (a circle between rooms is a circle too).
LAYERS = (
    ("core", "library_noise", "__init__"),  # ROS-free decisions; the package's own face
    ("models",),          # reward model backends and their loading
    ("settings", "recordings"),  # the parameter table; recordings and their formats
    ("simulation", "visualisation", "serving"),
    ("node",),            # the ROS 2 shell (and the process that runs it)
    ("evaluation",),      # metrics and reports (the replay writes its agreement report)
    ("replay", "client"),
    ("training",),
    ("cli", "demo", "demo_console", "console"),  # console: the operator's terminal (operator_console)
)
LAYER = {room: index for index, rooms in enumerate(LAYERS) for room in rooms}
# The only rooms that may import rclpy (or a ROS message package through it at run time).
# console: the operator console is a RewardClient with a screen, so a ROS 2 participant.
ROS_ROOMS = {"node", "client", "demo", "demo_console", "console"}
ROS_PACKAGES = ("rclpy", "rclpy.", "launch", "launch_ros")


def _modules():
    """Map every module of the package (dotted name) to its file."""
    found = {}
    for folder, _, files in os.walk(SOURCE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, os.path.dirname(SOURCE))[:-3].split(os.sep)
                if relative[-1] == "__init__":
                    relative = relative[:-1] if len(relative) > 1 else relative
                found[".".join(relative)] = path
    return found


def _room(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path, modules):
    """Yield (imported module, names taken, line) for every import in the file, at any depth."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, (), node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = tuple(alias.name for alias in node.names)
            # "from pkg import module" imports that module
            submodules = [f"{node.module}.{n}" for n in names if f"{node.module}.{n}" in modules]
            for submodule in submodules:
                yield submodule, (), node.lineno
            rest = tuple(n for n in names if f"{node.module}.{n}" not in modules)
            if rest or not submodules:
                yield node.module, rest, node.lineno


@pytest.fixture(scope="module")
def graph():
    modules = _modules()
    assert f"{PACKAGE}.core.task_monitor" in modules and len(modules) > 100
    edges = []
    for module, path in modules.items():
        for target, names, line in _imports(path, modules):
            edges.append((module, target, names, f"{os.path.relpath(path, PACKAGE_ROOT)}:{line}"))
    return modules, edges


def test_every_room_has_a_layer(graph):
    modules, _ = graph
    rooms = {_room(m) for m in modules}
    assert rooms - set(LAYER) == set(), "a new room needs a place in LAYERS"


def test_no_circle_of_modules_or_rooms(graph):
    modules, edges = graph
    files = networkx.DiGraph()
    rooms = networkx.DiGraph()
    for module, target, _, _ in edges:
        if target in modules and target != module:
            files.add_edge(module, target)
            if _room(module) != _room(target):
                rooms.add_edge(_room(module), _room(target))
    circles = [sorted(c) for c in networkx.strongly_connected_components(files) if len(c) > 1]
    assert circles == [], f"modules that import each other: {circles}"
    circles = [sorted(c) for c in networkx.strongly_connected_components(rooms) if len(c) > 1]
    assert circles == [], f"rooms that import each other: {circles}"


def test_imports_run_downward_only(graph):
    modules, edges = graph
    upward = [f"{where}: {_room(module)} imports {target} ({_room(target)})"
              for module, target, _, where in edges
              if target in modules and LAYER[_room(target)] > LAYER[_room(module)]]
    assert upward == []
    # The rule the issue states in words, whatever the table above says.
    low = {"core", "models"}
    high = {"evaluation", "training", "cli", "node", "serving"}
    assert [e for e in edges if _room(e[0]) in low and e[1] in modules and _room(e[1]) in high] == []


def test_rclpy_only_in_the_ros_rooms(graph):
    _, edges = graph
    found = [f"{where}: {target}" for module, target, _, where in edges
             if target.startswith(ROS_PACKAGES) and _room(module) not in ROS_ROOMS]
    assert found == []


def test_no_private_name_taken_across_rooms(graph):
    modules, edges = graph
    taken = [f"{where}: {', '.join(n for n in names if n.startswith('_'))} from {target}"
             for module, target, names, where in edges
             if target.startswith(PACKAGE + ".") and _room(target) != _room(module)
             and any(n.startswith("_") for n in names)]
    assert taken == []
