# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A Foxglove layout's panels drawn with matplotlib from an episode MCAP: a still of what Foxglove shows.

For documentation and for machines without Foxglove (its web app is not reachable from the
project's machines). Each panel type of the layout has a drawing here: Image (the camera frame
at the cursor time ``at``), Plot (its message paths over time, the cursor as a line), State
Transitions (the values as steps), Raw Messages (the topic's messages as text). Failure events
are marked on every time axis.
"""
from __future__ import annotations

import math
import textwrap
from typing import Any, Dict, List, Optional, Tuple


def _read(mcap_dir: str, layout: Dict[str, Any], at: Optional[float]):
    """Series of every plotted topic, the camera frames nearest ``at``, and the raw messages shown."""
    from rosbags.rosbag2 import Reader
    from robo_reward_ros.core.image_decoding import decode_compressed, decode_raw
    from robo_reward_ros.recordings.episode_mcap import typestore_with_messages
    from robo_reward_ros.visualisation.foxglove_layout import panels
    store = typestore_with_messages()
    kinds = panels(layout)
    image_topics = {c["imageMode"]["imageTopic"] for kind, c in kinds if kind == "Image"}
    raw_topics = {c["topicPath"] for kind, c in kinds if kind == "RawMessages"}
    messages: Dict[str, List[Tuple[float, Any]]] = {}
    frames: Dict[str, Tuple[float, Any]] = {}
    origin = None
    with Reader(mcap_dir) as reader:
        for conn, log_ns, raw in reader.messages():
            origin = log_ns if origin is None else origin
            t = (log_ns - origin) / 1e9
            if conn.topic in image_topics:
                best = frames.get(conn.topic)
                if at is None or best is None or abs(t - at) < abs(best[0] - at):
                    frames[conn.topic] = (t, (conn.msgtype, raw))
                continue
            messages.setdefault(conn.topic, []).append((t, store.deserialize_cdr(raw, conn.msgtype)))
    images = {}
    for topic, (t, (msgtype, raw)) in frames.items():
        msg = store.deserialize_cdr(raw, msgtype)
        if msgtype.endswith("CompressedImage"):
            images[topic] = (t, decode_compressed(msg.format, msg.data))
        else:
            images[topic] = (t, decode_raw(msg.encoding, msg.height, msg.width, msg.step, msg.data))
    return messages, images, {t: messages.get(t, []) for t in raw_topics}


def _values(messages, path: str) -> Tuple[List[float], List[float]]:
    from robo_reward_ros.visualisation.foxglove_layout import parse_path
    topic, condition, field = parse_path(path)
    xs, ys = [], []
    for t, msg in messages.get(topic, []):
        if condition is not None and str(getattr(msg, condition[0])) != condition[1]:
            continue
        value = float(getattr(msg, field))
        if not math.isnan(value):
            xs.append(t)
            ys.append(value)
    return xs, ys


def render_layout(mcap_dir: str, layout: Dict[str, Any], out_png: str, at: Optional[float] = None,
                  title: str = "") -> str:
    """Draw the layout's panels from ``mcap_dir`` (a rosbag2 MCAP folder) into ``out_png``.

    ``at``: the cursor, in seconds from the first message (default: the first failure event, else the end).
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from robo_reward_ros.visualisation.foxglove_layout import panels
    kinds = panels(layout)
    messages, _, _ = _read(mcap_dir, layout, None) if at is None else ({}, {}, {})
    failure_topic = next((c["topicPath"] for kind, c in kinds if kind == "RawMessages"), "")
    if at is None:
        failures = messages.get(failure_topic, [])
        ends = [series[-1][0] for series in messages.values() if series]
        at = failures[0][0] if failures else (max(ends) if ends else 0.0)
    messages, images, raw = _read(mcap_dir, layout, at)
    failure_times = [t for t, _ in messages.get(failure_topic, [])]
    image_panels = [c for kind, c in kinds if kind == "Image"]
    time_panels = [(kind, c) for kind, c in kinds if kind in ("Plot", "StateTransitions")]
    text_panels = [c for kind, c in kinds if kind == "RawMessages"]
    rows = 1 + len(time_panels)
    figure = plt.figure(figsize=(12, 3.2 + 2.2 * len(time_panels)))
    grid = figure.add_gridspec(rows, max(1, len(image_panels)) + 1, height_ratios=[1.6] + [1] * len(time_panels),
                               width_ratios=[1] * max(1, len(image_panels)) + [0.9])
    for column, config in enumerate(image_panels):
        axes = figure.add_subplot(grid[0, column])
        topic = config["imageMode"]["imageTopic"]
        if topic in images:
            t, rgb = images[topic]
            axes.imshow(rgb)
            axes.set_title(f"{config.get('title', topic)}  (t = {t:.1f} s)", fontsize=9)
        axes.axis("off")
    shared = None
    for row, (kind, config) in enumerate(time_panels, start=1):
        axes = figure.add_subplot(grid[row, :-1], sharex=shared)
        shared = shared or axes
        for series in config["paths"]:
            xs, ys = _values(messages, series["value"])
            style = dict(drawstyle="steps-post") if kind == "StateTransitions" else dict(marker=".", ms=3)
            axes.plot(xs, ys, label=series.get("label") or series["value"], lw=1.2, **style)
        for t in failure_times:
            axes.axvline(t, color="red", lw=0.8, ls=":")
        axes.axvline(at, color="black", lw=0.8)
        if "minYValue" in config:
            axes.set_ylim(config["minYValue"] - 0.05, config["maxYValue"] + 0.05)
        axes.set_title(config.get("title", kind), fontsize=9, loc="left")
        axes.legend(fontsize=7, loc="upper left")
        axes.grid(alpha=0.3)
    if shared is not None:
        shared.figure.axes[-1].set_xlabel("time since the episode's first frame (s)")
    for config in text_panels[:1]:
        axes = figure.add_subplot(grid[:, -1])
        axes.axis("off")
        lines = [f"{config.get('title', config['topicPath'])} ({config['topicPath']})", ""]
        for t, msg in raw.get(config["topicPath"], [])[:12]:
            lines.append(f"t={t:.1f}s kind={getattr(msg, 'kind', '')} terminal={getattr(msg, 'terminal', '')}")
            lines += textwrap.wrap(str(getattr(msg, "description", "")), 44, initial_indent="  ",
                                   subsequent_indent="  ")[:3]
        if len(lines) == 2:
            lines.append("(none)")
        axes.text(0.0, 1.0, "\n".join(lines), va="top", family="monospace", fontsize=7)
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(out_png, dpi=100)
    plt.close(figure)
    return out_png
