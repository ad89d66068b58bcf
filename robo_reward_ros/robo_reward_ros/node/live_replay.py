# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episodes through the live node over ROS topics, to check that node and offline replay agree.

Starts the installed ``reward_node`` as a child process with the same parameter values as the
offline replay (except camera QoS: reliable with a deep queue, so the replay loses no frame),
then per episode: sets the task (``~/set_task``), starts an episode named after it
(``~/start_episode``), publishes the frames in real time on the camera topic (stamped now +
their offset in the episode), and collects ``reward``, ``failure_events`` and ``task_state``
until the node has scored the last frame. Imports rclpy: a ROS client of the node, not an offline tool.
"""
from __future__ import annotations

import os
import subprocess
import time
from typing import Any, Dict, List, Optional

from robo_reward_ros.core.events import FailureKind, TaskStatus
from robo_reward_ros.core.stamps import to_seconds
from robo_reward_ros.node.node_process import (installed_executable, node_argv, start_process,
                                               stop_process)
from robo_reward_ros.recordings.episode import Episode
from robo_reward_ros.recordings.trace import EpisodeTrace, EstimateRecord, EventRecord

LIVE_OVERRIDES = {"cameras.qos.reliability": "reliable", "cameras.qos.depth": 100}


class EpisodePlayer:
    """A camera and a task source for a running reward node: plays episodes in real time."""

    def __init__(self, camera_topic: str = "camera/image_raw", node_name: str = "reward_node",
                 rate_hz: float = 2.0, process: Optional[subprocess.Popen] = None,
                 log_path: str = "", ready_timeout: float = 120.0) -> None:
        import rclpy
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from robo_reward_msgs.msg import FailureEvent, RewardEstimate, TaskState
        from robo_reward_msgs.srv import SetTask, StartEpisode
        from sensor_msgs.msg import Image
        from robo_reward_ros.node.qos_profiles import LATCHED_LISTENER_QOS
        self.process, self.log_path, self.rate_hz = process, log_path, rate_hz
        self._context = rclpy.Context()
        rclpy.init(context=self._context)
        self.node = rclpy.create_node("robo_reward_episode_player", context=self._context)
        self._executor = rclpy.executors.SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self.node)
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self._camera = self.node.create_publisher(Image, camera_topic, qos)
        self._set_task = self.node.create_client(SetTask, f"/{node_name}/set_task")
        self._start = self.node.create_client(StartEpisode, f"/{node_name}/start_episode")
        self.estimates: List[Any] = []
        self.failures: List[Any] = []
        self.states: List[Any] = []
        self.node.create_subscription(RewardEstimate, "reward", self.estimates.append, 100)
        self.node.create_subscription(FailureEvent, "failure_events", self.failures.append, 100)
        self.node.create_subscription(TaskState, "task_state", self.states.append, LATCHED_LISTENER_QOS)
        try:
            self._wait(lambda: self._set_task.service_is_ready() and self._start.service_is_ready()
                       and self._camera.get_subscription_count() > 0, ready_timeout,
                       "the reward node to load its model and activate")
        except BaseException:  # a timeout, or a Ctrl-C while the node loads: no context left open
            self.close()
            raise

    def _wait(self, condition, timeout: float, what: str, meanwhile=None) -> None:
        """Spin until ``condition()``; ``meanwhile()`` runs on every turn (keeps a camera streaming)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if meanwhile is not None:
                meanwhile()
            if self.process is not None:
                if self.process.poll() is not None:
                    raise RuntimeError(f"reward_node exited ({self.process.returncode}) while "
                                       f"waiting for {what}; see {self.log_path}")
                if b"configure failed" in _tail(self.log_path):
                    raise RuntimeError(f"reward_node could not configure; see {self.log_path}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
            self._executor.spin_once(timeout_sec=0.02)

    def _call(self, client, request, what: str):
        future = client.call_async(request)
        self._wait(future.done, 30.0, what)
        response = future.result()
        if not response.success:
            raise RuntimeError(f"{what} refused: {response.message}")
        return response

    def play(self, episode: Episode, hold_last_frame: bool = False) -> float:
        """Play an episode to the node; return the offset from episode time to the stamps sent.

        Set the task, start an episode named after it, publish its frames in real time
        (stamped now + their offset), wait until the node scored the last one (or ended the episode).
        With ``hold_last_frame`` the camera goes on streaming the last image at the recording's
        frame rate while it waits, as a real camera shows the robot standing still: a camera that
        falls silent while an episode runs is a stale camera to the node, and scoring the last
        frame can take longer than the node's stale limit. The next episode's ``set_task`` ends
        the episode, so the recording's end is never a camera fault.
        """
        from robo_reward_msgs.srv import SetTask, StartEpisode
        from robo_reward_ros.core.task_spec import build_task
        from robo_reward_ros.node.task_conversions import task_to_msg
        self._call(self._set_task, SetTask.Request(
            task=task_to_msg(build_task(list(episode.instructions))), start_episode=False),
            "set_task")
        self._call(self._start, StartEpisode.Request(episode_id=episode.name,
                                                     reason="next recorded episode"),
                   "start_episode")
        origin = episode.frames[0].stamp
        base = time.time() + 0.05
        started = time.monotonic() + 0.05
        for frame in episode.frames:
            due = started + (frame.stamp - origin)
            while time.monotonic() < due:
                self._executor.spin_once(timeout_sec=max(0.0, min(0.01, due - time.monotonic())))
            self._camera.publish(_image(frame.rgb, base + frame.stamp - origin))
        last = base + episode.frames[-1].stamp - origin
        hold = self._holder(episode, started, origin, base) if hold_last_frame else None

        def finished() -> bool:
            ended = any(s.episode_id == episode.name and TaskStatus(s.status).ended for s in self.states)
            return ended or any(m.episode_id == episode.name
                                and to_seconds(m.header.stamp) >= last - 1e-3
                                for m in self.estimates)

        try:
            self._wait(finished, 10.0 / self.rate_hz + 30.0,
                       f"the estimate of {episode.name}'s last frame", hold)
        except TimeoutError:
            pass  # the node may have stopped scoring (a model error): report what came
        deadline = time.monotonic() + 0.3  # late events (failures) of the same step
        while time.monotonic() < deadline:
            if hold is not None:
                hold()
            self._executor.spin_once(timeout_sec=0.02)
        return base - origin

    def _holder(self, episode: Episode, started: float, origin: float, base: float):
        """Return a function that publishes the last image again whenever a frame period has passed."""
        stamps = episode.stamps
        period = (stamps[-1] - stamps[0]) / (len(stamps) - 1) if len(stamps) > 1 else 0.1
        rgb = episode.frames[-1].rgb
        due = [stamps[-1] - origin + period]  # seconds after the episode's first frame

        def hold() -> None:
            while time.monotonic() >= started + due[0]:
                self._camera.publish(_image(rgb, base + due[0]))
                due[0] += period
        return hold

    def close(self) -> None:
        import rclpy
        try:
            self.node.destroy_node()
            self._executor.shutdown()
        finally:
            rclpy.try_shutdown(context=self._context)


def trace_from_messages(episode: Episode, estimates, failures, states, offset: float,
                        bag: str = "") -> EpisodeTrace:
    """Return the node's messages about ``episode`` (matched by episode id) as a trace in episode time.

    Episode time is message stamp - ``offset``.
    """
    trace = EpisodeTrace(episode, bag=bag)
    for msg in [m for m in estimates if m.episode_id == episode.name]:
        success = msg.success_probability if msg.has_success_probability else None
        trace.estimates.append(trace.add_truth(EstimateRecord(
            episode=episode.name, stamp=to_seconds(msg.header.stamp) - offset,
            stage=msg.stage_index, progress=float(msg.progress), success_prob=success,
            reward=float(msg.reward), stage_succeeded=bool(msg.success),
            frame_stamps=[to_seconds(s) - offset for s in msg.frame_stamps],
            frame_progress=[float(v) for v in msg.frame_progress],
            frame_success=[float(v) for v in msg.frame_success_probability],
            latency_s=float(msg.inference_latency_sec), camera=msg.camera)))
        if msg.success:
            trace.events.append(EventRecord(episode.name, trace.estimates[-1].stamp,
                                            msg.stage_index, "stage_succeeded"))
    for msg in [m for m in failures if m.episode_id == episode.name]:
        trace.events.append(EventRecord(
            episode.name, to_seconds(msg.header.stamp) - offset, msg.stage_index, "failure",
            kind=FailureKind(msg.kind).name.lower(), terminal=msg.terminal,
            task_failure=msg.task_failure, text=msg.description))
    succeeded = {e.stage for e in trace.events if e.type == "stage_succeeded"}
    trace.events.extend(_state_events(
        episode.name, [m for m in states if m.episode_id == episode.name], offset, succeeded))
    trace.estimates.sort(key=lambda e: e.stamp)
    trace.events.sort(key=lambda e: e.stamp)
    return trace


def _state_events(name: str, states, offset: float, succeeded_stages) -> List[EventRecord]:
    """Return the stage successes no estimate carried and the episode's end, from its task states.

    A success the operator confirmed (or decided) is in the task state only: the model's estimate
    of that step said "pending". A state can be published more than once: the first end counts.
    """
    events, done = [], set(succeeded_stages)
    for msg in states:
        status, stamp = TaskStatus(msg.status), to_seconds(msg.header.stamp) - offset
        stage = {TaskStatus.STAGE_SUCCEEDED: msg.stage_index - 1,
                 TaskStatus.SUCCEEDED: msg.stage_count - 1}.get(status)
        if stage is not None and stage not in done:
            done.add(stage)
            events.append(EventRecord(name, stamp, stage, "stage_succeeded"))
        if status.ended:
            events.append(EventRecord(name, stamp, msg.stage_index, "episode_ended",
                                      status=status.name.lower(), text=msg.reason))
            break
    return events


def start_node(values: Dict[str, Any], log_path: str) -> subprocess.Popen:
    return start_process(node_argv(installed_executable("reward_node"), values), log_path)


def _tail(path: str, size: int = 4096) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(max(0, os.path.getsize(path) - size))
        return handle.read()


def _image(rgb, stamp: float):
    from robo_reward_ros.node.image_messages import rgb_image
    from robo_reward_ros.node.stamps import to_time
    return rgb_image(rgb, to_time(stamp), "camera")


def live_replay_all(values: Dict[str, Any], bags: List[str], log_path: str,
                    max_frames: Optional[int] = None, log=print) -> List[EpisodeTrace]:
    """Start the installed node with ``values`` (+ LIVE_OVERRIDES), play every bag, stop it."""
    from robo_reward_ros.recordings.episode_bag import read_episode_bag
    os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    values = {**values, **LIVE_OVERRIDES}
    process = start_node(values, log_path)
    traces = []
    try:
        player = EpisodePlayer(values["cameras.topics"][0], rate_hz=values["inference.rate_hz"],
                               process=process, log_path=log_path)
        try:
            for bag in bags:
                episode = read_episode_bag(bag, max_frames)
                log(f"live: {episode.name} ({len(episode.frames)} frames, "
                    f"{episode.frames[-1].stamp - episode.frames[0].stamp:.1f} s)")
                offset = player.play(episode)
                traces.append(trace_from_messages(episode, player.estimates, player.failures,
                                                  player.states, offset, bag))
        finally:
            player.close()
    finally:
        code = stop_process(process)
    if code != 0:
        raise RuntimeError(f"reward_node exited with {code}; see {log_path}")
    return traces


def main(argv=None) -> int:
    """``python -m robo_reward_ros.node.live_replay BAG...``: play recorded episodes to a running reward node.

    A camera and task source (the demo's camera process).
    """
    import argparse
    import sys
    from robo_reward_ros.recordings.episode_bag import find_bags, read_episode_bag
    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("bags", nargs="+")
    parser.add_argument("--camera-topic", default="camera/image_raw")
    parser.add_argument("--node-name", default="reward_node")
    parser.add_argument("--rate-hz", type=float, default=2.0, help="the node's inference.rate_hz")
    parser.add_argument("--quiet", action="store_true", help="print nothing per episode")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        player = EpisodePlayer(args.camera_topic, args.node_name, args.rate_hz)
    except KeyboardInterrupt:  # a Ctrl-C (or the demo stopping) while the node loads: a clean stop
        return 0
    try:
        for bag in find_bags(args.bags):
            episode = read_episode_bag(bag)
            if not args.quiet:
                print(f"camera: playing {episode.name} ({len(episode.frames)} frames)", flush=True)
            player.play(episode, hold_last_frame=True)
    except KeyboardInterrupt:
        pass
    finally:
        player.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
