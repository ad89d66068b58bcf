# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``operator_console``: the terminal a person runs beside the robot to watch one reward node and correct it.

The screen redraws a few times a second from what the RewardClient holds; keys go to the node
through a worker (operator_actions.py), so the screen never waits on the node. It outlives the
node: the client subscribes by topic, so a restarted node shows up again by itself.
"""
from __future__ import annotations

import argparse
import getpass
import sys
from typing import List, Optional

import rclpy
from prompt_toolkit.application import Application
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import FormattedTextControl, Layout, Window
from prompt_toolkit.styles import Style
from rclpy.signals import SignalHandlerOptions

from robo_reward_ros.client import RewardClient
from robo_reward_ros.console.console_view import Snapshot, render
from robo_reward_ros.console.node_presence import NodePresence
from robo_reward_ros.console.operator_actions import KEYS, OperatorActions

REFRESH_SEC = 0.25
STYLE = Style.from_dict({
    "title": "bold", "section": "bold underline", "instruction": "bold",
    "good": "ansigreen bold", "bad": "ansired bold", "warn": "ansiyellow", "waiting": "ansicyan",
    "pending": "ansiyellow bold", "banner": "reverse ansiyellow bold", "banner-warn": "reverse ansiyellow",
    "banner-bad": "reverse ansired bold", "keys": "reverse",
})


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="operator_console",
        description="Watch one reward node (task state, progress, alerts, operator labels) and "
                    "correct it with single keys: " + ", ".join(f"{k} {w}" for k, w in KEYS.items())
                    + ", q quit.")
    parser.add_argument("--namespace", default="", help="the reward node's namespace (e.g. /robot1)")
    parser.add_argument("--node-name", default="reward_node", help="the reward node's name")
    parser.add_argument("--source", default=None,
                        help="the operator's name in every label (default: the login user name)")
    parser.add_argument("--timeout", type=float, default=5.0,
                        help="seconds a service call may take before it shows as an error")
    return parser.parse_args(argv)


def _application(client: RewardClient, actions: OperatorActions, presence: NodePresence) -> Application:
    bindings = KeyBindings()
    for key in KEYS:
        bindings.add(key)(lambda event, key=key: actions.press(key))

    @bindings.add("q")
    @bindings.add("c-c")  # Ctrl-C typed in the console's terminal
    @bindings.add("<sigint>")  # SIGINT from elsewhere (kill -INT), which prompt_toolkit turns into this
    def _quit(event) -> None:
        event.app.exit()

    def screen():
        status, since = presence.update()
        state = client.task_state()
        episode = state.episode_id if state is not None else ""
        return render(Snapshot(presence.path, status, since, actions.source, state, client.latest_step(),
                               client.failures(episode) if episode else [], client.labels(),
                               actions.records()))

    window = Window(FormattedTextControl(screen), wrap_lines=True)
    return Application(layout=Layout(window), key_bindings=bindings, style=STYLE, full_screen=True,
                       refresh_interval=REFRESH_SEC)


def _login_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in the environment nor the password database (a bare container)
        return "console"


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    # A context of its own, without rclpy's signal handlers: Ctrl-C is a key of the console
    # (prompt_toolkit turns SIGINT into it), which quits cleanly.
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    client = RewardClient(namespace=args.namespace, node_name=args.node_name, context=context)
    actions = OperatorActions(client, args.source or _login_name(), args.timeout)
    presence = NodePresence(client.node, args.node_name, args.namespace)
    try:
        app = _application(client, actions, presence)
        actions.on_change = app.invalidate
        app.run()
    finally:
        actions.close()
        client.close()
        rclpy.try_shutdown(context=context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
