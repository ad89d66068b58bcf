# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The README's first command: the reward node scoring recorded episodes, watched from outside.

Builds what it needs on first use (the model's loadable directory and Meta-World episode bags,
cached under ~/.cache/robo_reward_ros; nothing is downloaded), then starts the installed ``reward_node`` and
a camera process that plays the episodes (Meta-World and the real robot clips) as a camera and
a task source, as separate processes. It listens to the node like an RL controller and an
operator console would, prints what arrives (demo_console.py: a compact live view, or every message
with ``--verbose``), and at the end writes per-episode logs and plots and prints a summary table
with the figures ``robo-reward eval`` computes from them.

Without ``--model`` the node loads the demo model: a tiny Qwen3-VL-architecture Robometer-layout
checkpoint trained here with ``robo-reward finetune`` on Meta-World episodes, when its weights are
in the package's ``data/demo-robometer`` or installed by ``python -m
robo_reward_ros.training.demo_model --install``; the episodes played are ones it never trained on
(seed 0). Without those weights it uses a tiny checkpoint with random weights: every stage runs
for real, the numbers mean nothing.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import List

from robo_reward_ros.core.stamps import to_seconds
from robo_reward_ros.simulation.demo_assets import (DEMO_PARAMETERS, DEMO_SCENARIOS,
                                                    RANDOM_MODEL_PARAMETERS, ROBOT_LINE)


def parse_args(argv: List[str]) -> argparse.Namespace:
    from robo_reward_ros.models.loading.bundled_demo import cache_dir
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="",
                        help="Robometer checkpoint directory or id (default: the demo model "
                             "trained here; a tiny random one if its weights are missing)")
    parser.add_argument("--scenario", action="append", default=[],
                        help="Meta-World scenario to play (repeatable; default: "
                             f"{', '.join(DEMO_SCENARIOS)}; robo-reward sim-bags --help lists them)")
    parser.add_argument("--clips", type=int, default=3,
                        help="real robot clips to play after them (0-3, default 3)")
    parser.add_argument("--out", default=os.path.join(cache_dir(), "demo-output"),
                        help="where the logs and plots go")
    parser.add_argument("--duration", type=float, default=0.0,
                        help="stop after this many seconds (default: when every episode played)")
    parser.add_argument("--verbose", action="store_true",
                        help="print every message the node publishes (every estimate, task state and "
                             "/diagnostics array) instead of the compact view")
    return parser.parse_args(argv)


def main(argv: List[str] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from robo_reward_ros.simulation import demo_assets
    from robo_reward_ros.models.loading.bundled_demo import trained_demo_checkpoint
    say = lambda text: print(f"demo: {text}", flush=True)  # noqa: E731
    model, tiny = args.model, False
    if not model:
        model = trained_demo_checkpoint(say)
        if model:
            say("the model is a tiny Robometer-layout checkpoint (Qwen3-VL architecture) TRAINED HERE "
                "with robo-reward finetune on Meta-World episodes; the episodes below were never "
                "trained on")
        else:
            tiny = True
            say("the model is a TINY checkpoint with RANDOM weights (the trained demo weights are "
                "missing: python -m robo_reward_ros.training.demo_model --install makes them): every "
                "stage of the pipeline runs for real, but its progress and success numbers mean nothing")
            model = demo_assets.demo_checkpoint(say)
    bags = demo_assets.demo_sim_bags(args.scenario or DEMO_SCENARIOS, log=say)
    bags += demo_assets.demo_clip_bags(say)[:max(0, args.clips)]
    return run(model, bags, args.out, args.duration, tiny=tiny,
               parameters=RANDOM_MODEL_PARAMETERS if tiny else DEMO_PARAMETERS, verbose=args.verbose)


def run(model: str, bags: List[str], out: str, duration: float, tiny: bool, parameters=None,
        verbose: bool = False) -> int:
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    from diagnostic_msgs.msg import DiagnosticArray
    from robo_reward_msgs.msg import FailureEvent, OperatorLabel, RewardEstimate, TaskState
    from robo_reward_ros.demo_console import DemoConsole, operator_summary
    from robo_reward_ros.node.ros_compat import shut_down_keeping_signal_handlers
    from robo_reward_ros.recordings.episode_bag import read_episode_bag
    from robo_reward_ros.node.node_process import (installed_executable, node_argv, start_process,
                                                   stop_process)
    from robo_reward_ros.replay.offline_replay import node_parameter_values
    from robo_reward_ros.node.qos_profiles import LATCHED_LISTENER_QOS
    os.makedirs(out, exist_ok=True)
    values = node_parameter_values(model, overrides={
        **(DEMO_PARAMETERS if parameters is None else parameters),
        "episode_log.directory": os.path.join(out, "episode-logs")})
    children = [
        # In the terminal's process group: a Ctrl-C reaches the node as it would reach a launch.
        start_process(node_argv(installed_executable("reward_node"), values),
                      os.path.join(out, "reward_node.log"), own_group=False),
        subprocess.Popen([sys.executable, "-m", "robo_reward_ros.node.live_replay",
                          "--rate-hz", str(values["inference.rate_hz"])]
                         + ([] if verbose else ["--quiet"]) + bags),
    ]
    print(f"demo: started reward_node (log {out}/reward_node.log) and a camera playing "
          f"{len(bags)} episode(s); the node loads its model first", flush=True)
    episodes = [read_episode_bag(bag) for bag in bags]  # while the node loads its model
    console = DemoConsole(episodes, verbose)
    # No rclpy signal handlers: with them a Ctrl-C could arrive as rclpy's shutdown of the
    # context (ExternalShutdownException out of spin_once, a traceback and exit 1: seen under
    # load) instead of the KeyboardInterrupt that stops the demo cleanly below.
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("robo_reward_demo_listener")
    seen = {"estimates": [], "failures": [], "states": [], "labels": []}

    def keep(kind, show):
        return lambda msg: (seen[kind].append(msg), show(msg))
    # In the order the node publishes a step (estimate, events, then state): when several are
    # waiting, the executor takes them in the order their subscriptions were made.
    node.create_subscription(RewardEstimate, "reward", keep("estimates", console.estimate), 100)
    node.create_subscription(FailureEvent, "failure_events", keep("failures", console.failure), 100)
    # An operator's label goes out before the state it changed: shown in that order too.
    node.create_subscription(OperatorLabel, "operator_labels", keep("labels", console.label), 100)
    node.create_subscription(TaskState, "task_state", keep("states", console.state),
                             LATCHED_LISTENER_QOS)
    node.create_subscription(DiagnosticArray, "/diagnostics", console.diagnostics, 10)
    if values.get("operator.confirm_decisions"):
        ScriptedOperatorClient(node, episodes, console)
    deadline = time.monotonic() + duration if duration > 0 else float("inf")
    try:
        while (time.monotonic() < deadline and children[1].poll() is None
               and children[0].poll() is None):
            rclpy.spin_once(node, timeout_sec=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        shut_down_keeping_signal_handlers()
        codes = [stop_process(child) for child in reversed(children)][::-1]
    written = _write_outputs(bags, episodes, seen, out, tiny)
    print(f"demo: stopped; exit codes {codes}")
    if written:
        print(summary(out))
        print(operator_summary([e.name for e in episodes], seen["states"], seen["labels"],
                               console.episode_time))
    for line in written:
        print(f"demo: wrote {line}")
    if tiny:
        print("demo: the numbers above came from a tiny random model. On a robot, run a real "
              f"model with one line:\n  {ROBOT_LINE}")
    else:
        print("demo: on a robot, run a published model (Robometer-4B) with one line:\n"
              f"  {ROBOT_LINE}")
    return 0 if all(code == 0 for code in codes) else 1


class ScriptedOperatorClient:
    """Answer the node's pending decisions as a person would, from the played recordings' ground truth.

    Calls ``~/submit_verdict`` without waiting (the answer is the label on ``operator_labels``).
    """

    def __init__(self, node, episodes, console) -> None:
        from robo_reward_msgs.msg import TaskState
        from robo_reward_msgs.srv import SubmitVerdict
        from robo_reward_ros.node.qos_profiles import LATCHED_LISTENER_QOS
        self._episodes = {episode.name: episode for episode in episodes}
        self._console = console
        self._answered = set()
        self._pending_status = TaskState.STATUS_PENDING
        self._client = node.create_client(SubmitVerdict, "reward_node/submit_verdict")
        self._request = SubmitVerdict.Request
        node.create_subscription(TaskState, "task_state", self._on_state, LATCHED_LISTENER_QOS)

    def _on_state(self, msg) -> None:
        from robo_reward_msgs.msg import OperatorVerdict
        from robo_reward_ros.simulation.scripted_operator import SOURCE, judge_pending
        episode = self._episodes.get(msg.episode_id)
        key = (msg.episode_id, msg.stage_index, msg.header.stamp.sec, msg.header.stamp.nanosec)
        if msg.status != self._pending_status or episode is None or key in self._answered:
            return
        self._answered.add(key)
        when = self._console.episode_time(msg.episode_id, to_seconds(msg.header.stamp))
        judgement = None if when is None else judge_pending(
            episode, msg.stage_index, msg.pending_success, when)
        if judgement is None:
            return  # no ground truth: the wait's own rule (operator.confirm_timeout_*) decides
        verdict = {"success": OperatorVerdict.SUCCESS, "failure": OperatorVerdict.FAILURE,
                   "not_yet": OperatorVerdict.NOT_YET}[judgement.verdict]
        self._client.call_async(self._request(verdict=OperatorVerdict(
            episode_id=msg.episode_id, stage_number=msg.stage_index + 1, verdict=verdict,
            source=SOURCE, reason=judgement.reason)))


def summary(out: str) -> str:
    """Return the end-of-demo table: eval's own per-episode figures, from the files just written."""
    from robo_reward_ros.evaluation.report import decisions_table
    from robo_reward_ros.evaluation.scoring import episode_rows
    from robo_reward_ros.recordings.trace import read_replay
    return ("demo: summary (episode times in s; what robo-reward eval computes from "
            f"{out}):\n{decisions_table(episode_rows(read_replay(out)))}")


def _write_outputs(bags: List[str], episodes, seen, out: str, tiny: bool) -> List[str]:
    """Per-episode traces (estimates, events, truth) and plots from what the node published."""
    from robo_reward_ros.replay.replay_run import write_plots
    from robo_reward_ros.node.live_replay import trace_from_messages
    from robo_reward_ros.recordings.trace import write_traces
    traces = []
    for bag, episode in zip(bags, episodes):
        mine = [m for m in seen["estimates"] if m.episode_id == episode.name]
        if not mine:
            continue
        # The window keeps the stage's first frame: the first estimate's first frame stamp is
        # the episode's first frame.
        first = mine[0].frame_stamps[0]
        offset = to_seconds(first) - episode.frames[0].stamp
        traces.append(trace_from_messages(episode, seen["estimates"], seen["failures"],
                                          seen["states"], offset, bag))
    if not traces:
        return []
    write_traces(traces, out, {"mode": "live demo", "tiny_random_model": tiny})
    plots = write_plots(out, " - tiny random model" if tiny else " - demo model trained here")
    return [f"{out}/estimates.jsonl, events.jsonl (and .csv), episodes.json",
            f"{len(plots)} plot(s) in {out}/plots/", f"node episode logs in {out}/episode-logs/"]


if __name__ == "__main__":
    sys.exit(main())
