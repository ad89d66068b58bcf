# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Foxglove layouts for the reward node's topics: the video above, the reward curves under it.

One function makes them so the layout ``replay --mcap`` writes for a run's cameras and the one
shipped as ``config/foxglove/reward_node.json`` (the node's default camera, live or in a replay of
the project's bags) cannot drift apart.
Panels: an Image panel per camera, a Plot of each camera's progress and success probability, a
Plot of the reward, a State Transitions panel of the task status and stage, and a Raw Messages
panel of the failure events. The live node's layout adds the operator's actions: Call Service
buttons for a veto, a success or failure verdict, a takeover's start and end and reset-done, and
a Raw Messages panel of the operator labels (what the node did with them). Import in Foxglove with
Layouts > Import from file.
"""
from __future__ import annotations

import json
import re
from typing import Dict, List, Optional, Sequence, Tuple

# A message path as used here: /topic, optionally {field=="value"}, then .field
PATH = re.compile(r'^(?P<topic>/[^{.]+)(?:\{(?P<key>\w+)=="(?P<value>[^"]*)"\})?\.(?P<field>\w+)$')


def _series(path: str, label: str) -> Dict[str, object]:
    return {"value": path, "enabled": True, "timestampMethod": "receiveTime", "label": label}


def _split(panels: List[str], direction: str):
    """Nest panel ids into Foxglove's binary split tree, in equal shares."""
    if len(panels) == 1:
        return panels[0]
    return {"first": panels[0], "second": _split(panels[1:], direction), "direction": direction,
            "splitPercentage": 100.0 / len(panels)}


# The operator's buttons: (panel id, service, request as JSON, button text, colour).
OPERATOR_ACTIONS = (
    ("veto", "submit_verdict", {"verdict": {"verdict": 3, "source": "foxglove", "reason": "vetoed in Foxglove"}},
     "Veto: not yet", "#c98b1e"),
    ("success", "submit_verdict", {"verdict": {"verdict": 1, "source": "foxglove", "reason": "success in Foxglove"}},
     "Success", "#2e8b57"),
    ("failure", "submit_verdict", {"verdict": {"verdict": 2, "source": "foxglove", "reason": "failure in Foxglove"}},
     "Failure", "#b22222"),
    ("takeover", "set_intervention", {"active": True, "source": "foxglove"}, "Take over", "#4169e1"),
    ("handback", "set_intervention", {"active": False, "source": "foxglove"}, "Hand back", "#4169e1"),
    ("reset_done", "report_reset_done", {"source": "foxglove"}, "Reset done", "#708090"),
)


def make_layout(camera_topics: Sequence[str], camera_names: Optional[Sequence[str]] = None,
                namespace: str = "", node: str = "") -> Dict[str, object]:
    """Build the layout; ``camera_names`` are the ``camera`` fields of RewardEstimate (default: topics).

    ``node``: the live node's name (``reward_node``) for the operator's buttons; empty (a replay's
    layout): none.
    """
    from robo_reward_ros.settings.node_settings import camera_name
    names = list(camera_names or [camera_name(t) for t in camera_topics])
    prefix = namespace.rstrip("/")
    reward, state, failures = f"{prefix}/reward", f"{prefix}/task_state", f"{prefix}/failure_events"
    config: Dict[str, Dict[str, object]] = {}
    images = []
    for index, topic in enumerate(camera_topics):
        panel = f"Image!camera{index}"
        config[panel] = {"title": topic, "imageMode": {"imageTopic": topic}}
        images.append(panel)
    progress = []
    for name in names:
        progress.append(_series(f'{reward}{{camera=="{name}"}}.progress', f"progress {name}"))
        progress.append(_series(f'{reward}{{camera=="{name}"}}.success_probability', f"success {name}"))
    config["Plot!progress"] = {"title": "progress and success probability", "paths": progress,
                               "showLegend": True, "legendDisplay": "floating", "xAxisVal": "timestamp",
                               "minYValue": 0, "maxYValue": 1, "isSynced": True}
    config["Plot!reward"] = {"title": "reward", "paths": [_series(f"{reward}.reward", "reward")],
                             "showLegend": True, "xAxisVal": "timestamp", "isSynced": True}
    config["StateTransitions!task"] = {"title": "task state", "isSynced": True, "paths": [
        _series(f"{state}.status", "status"), _series(f"{state}.stage_index", "stage")]}
    config["RawMessages!failures"] = {"title": "failure events", "topicPath": failures, "expansion": "all"}
    plots = _split(["Plot!progress", "Plot!reward", "StateTransitions!task"], "column")
    side = "RawMessages!failures"
    if node:
        buttons = []
        for name, service, request, text, colour in OPERATOR_ACTIONS:
            panel = f"CallService!{name}"
            config[panel] = {"serviceName": f"{prefix}/{node}/{service}",
                             "requestPayload": json.dumps(request), "buttonText": text,
                             "buttonTooltip": f"{service}: {json.dumps(request)}", "buttonColor": colour,
                             "layout": "horizontal", "editingMode": False}
            buttons.append(panel)
        config["RawMessages!labels"] = {"title": "operator labels", "topicPath": f"{prefix}/operator_labels",
                                        "expansion": "all"}
        # The failures stay the first Raw Messages panel (render-layout marks their times).
        side = {"first": _split(buttons, "column"), "second": {
            "first": side, "second": "RawMessages!labels", "direction": "column", "splitPercentage": 50},
            "direction": "column", "splitPercentage": 40}
    return {"configById": config, "globalVariables": {}, "userNodes": {}, "linkedGlobalVariables": [],
            "playbackConfig": {"speed": 1.0, "messageOrder": "receiveTime"},
            "layout": {"first": {"first": _split(images, "row"), "second": plots, "direction": "column",
                                 "splitPercentage": 45},
                       "second": side, "direction": "row", "splitPercentage": 75}}


def write_layout(path: str, layout: Dict[str, object]) -> str:
    with open(path, "w") as handle:
        json.dump(layout, handle, indent=2)
        handle.write("\n")
    return path


def parse_path(path: str) -> Tuple[str, Optional[Tuple[str, str]], str]:
    """Split a message path into (topic, (key, value) filter or None, field)."""
    match = PATH.match(path)
    if match is None:
        raise ValueError(f"unsupported message path '{path}'")
    key = match.group("key")
    return match.group("topic"), ((key, match.group("value")) if key else None), match.group("field")


def panels(layout: Dict[str, object]) -> List[Tuple[str, Dict[str, object]]]:
    """Return the layout's panels in reading order (depth first through the split tree): (type, config)."""
    order: List[str] = []

    def walk(node) -> None:
        if isinstance(node, str):
            order.append(node)
        else:
            walk(node["first"])
            walk(node["second"])

    walk(layout["layout"])
    return [(panel.split("!", 1)[0], layout["configById"][panel]) for panel in order]
