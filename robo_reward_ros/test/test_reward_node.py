# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward node in its own process, seen from outside as an RL controller would see it.

The node runs the pixel-scripted backend (test/scripted_backend.py) through the same plugin
mechanism a team would use for its own model: each frame's red level is the progress the
"model" reports and its green level the success probability, so the test decides what the
model says by what the camera shows.
"""
import collections
import os
import time

import numpy as np
import pytest
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.srv import ListParameters
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from robo_reward_msgs.msg import (FailureEvent, ResetRequest, RewardEstimate, StageSpec,
                                  TaskSpec, TaskState)
from robo_reward_msgs.srv import ComparePreference, SetTask, StartEpisode
from sensor_msgs.msg import Image
from std_msgs.msg import String
from std_srvs.srv import Trigger

from robo_reward_ros.settings.parameter_table import SPECS
from robo_reward_ros.core.stamps import to_seconds
from robo_reward_ros.node.stamps import to_time
from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_QOS, LATCHED_LISTENER_QOS
from ros_fixtures import (DISCOVERY_TIMEOUT_SEC, PACKAGE_ROOT, SCRIPTED_ENV, SCRIPTED_MODEL_ARGS,
                          installed_executable, reward_node_argv, spin_until)
from scripted_backend import painted

CONFIG = os.path.join(PACKAGE_ROOT, "config", "reward.yaml")


def call(node, client, request, processes, timeout=DISCOVERY_TIMEOUT_SEC):
    spin_until(node, client.service_is_ready, what=f"service {client.srv_name}",
               processes=processes)
    future = client.call_async(request)
    spin_until(node, future.done, timeout=timeout, what=f"reply of {client.srv_name}",
               processes=processes)
    return future.result()


def rgb_image(rgb, stamp, encoding="rgb8"):
    """Build an Image message of an RGB array in the given encoding (channels reordered/added)."""
    if encoding == "bgr8":
        pixels = rgb[..., ::-1]
    elif encoding == "rgba8":
        pixels = np.concatenate([rgb, np.full(rgb.shape[:2] + (1,), 255, np.uint8)], axis=2)
    elif encoding == "bgra8":
        pixels = np.concatenate([rgb[..., ::-1], np.full(rgb.shape[:2] + (1,), 9, np.uint8)], 2)
    elif encoding == "mono8":
        pixels = rgb[..., :1]
    else:
        pixels = rgb
    pixels = np.ascontiguousarray(pixels)
    msg = Image(height=pixels.shape[0], width=pixels.shape[1], encoding=encoding,
                step=pixels.shape[1] * pixels.shape[2], data=pixels.tobytes())
    msg.header.stamp = to_time(stamp)
    msg.header.frame_id = "camera_color_optical_frame"
    return msg


class Listener:
    """Everything the node publishes, as a controller and an operator console receive it."""

    def __init__(self, node):
        self.states, self.estimates, self.failures, self.resets, self.diagnostics = [], [], [], [], []
        node.create_subscription(TaskState, "task_state", self.states.append, LATCHED_LISTENER_QOS)
        node.create_subscription(RewardEstimate, "reward", self.estimates.append, EVENTS_QOS)
        node.create_subscription(FailureEvent, "failure_events", self.failures.append,
                                 EVENTS_QOS)
        node.create_subscription(ResetRequest, "reset_request", self.resets.append, EVENTS_QOS)
        # Which publisher sent each array: a test that read another node's status (CI once read
        # a camera's "n/a" in test_reward_node_faults) can say who sent what.
        self.diagnostic_sources = []
        node.create_subscription(DiagnosticArray, "/diagnostics", self._diagnostics, 10)

    def _diagnostics(self, msg, info):
        self.diagnostics.append(msg)
        gid = info.get("publisher_gid")  # Kilted on; Jazzy's message info has none
        self.diagnostic_sources.append(bytes(gid["data"]).hex() if gid else "unknown")

    def diagnostic_publishers(self) -> str:
        """Say how many /diagnostics arrays came from each publisher (by gid, first heard first; Kilted on)."""
        return f"/diagnostics arrays per publisher gid: {dict(collections.Counter(self.diagnostic_sources))}"

    def wait_until_heard(self, ros_node, process, node_name="reward_node"):
        """Spin until the node's /diagnostics arrive here: the node now sends to every topic heard.

        Its events are one-shot and volatile, so one published before the node matched this
        listener's readers is lost (discovery is per direction and takes seconds under load).
        The /diagnostics reader is created last and endpoint discovery is delivered in order,
        so hearing the node on it means every earlier reader was matched.
        """
        spin_until(ros_node, lambda: any(node_name in status.name for array in self.diagnostics
                                         for status in array.status),
                   what=f"/diagnostics from {node_name}", processes=[process])

    def _values(self, name_part):
        """Yield the key-value table of each status named ``name_part``, the newest array first."""
        for array in reversed(self.diagnostics):
            for status in array.status:
                if name_part in status.name:
                    yield {kv.key: kv.value for kv in status.values}
                    break

    def diagnostic(self, name_part, key):
        return next(iter(self._values(name_part)), {}).get(key)

    def number(self, name_part, key):
        """Return the newest value of ``key`` that is a number in a status named ``name_part``, else None."""
        for values in self._values(name_part):
            try:
                return float(values.get(key))
            except (TypeError, ValueError):  # "n/a": not from this camera's node
                continue
        return None

    def message(self, name_part):
        """Return the newest message of the status whose name holds ``name_part`` ("" before one came)."""
        for array in reversed(self.diagnostics):
            for status in array.status:
                if name_part in status.name:
                    return status.message
        return ""


def test_node_scores_the_camera_stream_and_publishes_estimates(ros_node, spawn, tmp_path):
    camera_started = time.time()  # the synthetic camera stamps its frames with the wall clock
    camera = spawn([installed_executable("synthetic_camera"), "--ros-args", "-p", "rate_hz:=30.0"])
    # The scene's table is light: its green level would read as success 0.72.
    node = spawn(reward_node_argv("inference.rate_hz:=10.0", "success.threshold:=0.95",
                                  log_dir=str(tmp_path)),
                 env=SCRIPTED_ENV)
    processes = [camera, node]
    listen = Listener(ros_node)
    frames = []
    ros_node.create_subscription(Image, "camera/image_raw",
                                 lambda m: frames.append(to_seconds(m.header.stamp)),
                                 QoSProfile(depth=500, reliability=ReliabilityPolicy.BEST_EFFORT))
    ros_node.create_publisher(String, "instruction", LATCHED_QOS).publish(
        String(data="put the red block on the green square"))
    spin_until(ros_node, lambda: len(listen.estimates) >= 5 and frames,
               what="reward estimates (and a frame seen here)", processes=processes)
    frames_seen_until = time.time()
    estimate = listen.estimates[-1]
    assert estimate.instruction == "put the red block on the green square"
    assert estimate.backend == "pixel_scripted" and estimate.camera == "camera/image_raw"
    # Stamped with the newest frame the model used, a frame of this camera run. This test's own
    # subscription may join after the node's first frames (and miss some on a loaded machine), so
    # the bound is the camera's start, not the first frame seen here.
    assert estimate.frame_stamps[-1] == estimate.header.stamp
    assert camera_started <= to_seconds(estimate.header.stamp) <= frames_seen_until
    assert len(estimate.frame_progress) == len(estimate.frame_stamps) >= 1
    assert estimate.has_success_probability and 0.0 <= estimate.progress <= 1.0
    assert estimate.inference_latency_sec > 0.0
    state = listen.states[-1]
    assert state.status == TaskState.STATUS_RUNNING and estimate.episode_id == state.episode_id
    assert os.path.isfile(os.path.join(str(tmp_path), f"episode_{state.episode_id}.jsonl"))

    set_task = ros_node.create_client(SetTask, "/reward_node/set_task")
    bad = SetTask.Request(task=TaskSpec(stages=[StageSpec(instruction="open the drawer"),
                                                StageSpec(instruction="   ")]))
    reply = call(ros_node, set_task, bad, processes)
    assert not reply.success and "stage 2 has an empty instruction" in reply.message
    good = SetTask.Request(start_episode=True, task=TaskSpec(stages=[
        StageSpec(instruction="open the drawer"), StageSpec(instruction="put the cup in it")]))
    reply = call(ros_node, set_task, good, processes)
    assert reply.success and reply.episode_id and reply.episode_id != state.episode_id
    spin_until(ros_node, lambda: any(e.episode_id == reply.episode_id and
                                     e.instruction == "open the drawer" for e in listen.estimates),
               what="estimates of the new task", processes=processes)
    start = ros_node.create_client(StartEpisode, "/reward_node/start_episode")
    restarted = call(ros_node, start, StartEpisode.Request(episode_id="trial-7",
                                                           reason="operator reset"), processes)
    assert restarted.success and restarted.episode_id == "trial-7"
    spin_until(ros_node, lambda: any(e.episode_id == "trial-7" for e in listen.estimates),
               what="estimates of the restarted episode", processes=processes)
    aborted = [s for s in listen.states if s.episode_id == reply.episode_id and
               s.status == TaskState.STATUS_IDLE]
    assert aborted and "operator reset" in aborted[-1].reason
    spin_until(ros_node, lambda: listen.diagnostic("model", "inference_latency_p95_sec")
               not in (None, "n/a"), what="latency in diagnostics", processes=processes)
    assert listen.diagnostic("camera camera/image_raw", "transport") == "raw"
    for process in processes:
        assert process.interrupt() == 0, process.output()


def test_two_stage_task_advances_ends_and_asks_the_controller_to_reset(ros_node, spawn, tmp_path):
    resets_called = []

    def controller_reset(request, response):
        resets_called.append(request)
        response.success, response.message = True, "arm homed"
        return response

    ros_node.create_service(Trigger, "controller/reset", controller_reset)
    node = spawn(reward_node_argv("inference.rate_hz:=20.0", "reset.service:=/controller/reset",
                                  "window.min_interval_sec:=0.0", log_dir=str(tmp_path)),
                 env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = ros_node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
    set_task = ros_node.create_client(SetTask, "/reward_node/set_task")
    listen.wait_until_heard(ros_node, node)  # a frame's estimate and the reset are sent once
    two_stages = SetTask.Request(start_episode=True, task=TaskSpec(stages=[
        StageSpec(instruction="open the drawer"), StageSpec(instruction="put the cup in it")]))
    episode = call(ros_node, set_task, two_stages, [node]).episode_id
    clock = {"t": 100.0}

    def show(progress, success):
        """Lockstep: one frame, then wait until the node scored it (or the episode ended)."""
        clock["t"] += 0.1
        stamp = clock["t"]
        frame = rgb_image(painted(progress, success), stamp)

        def scored():
            camera.publish(frame)  # best effort: resend until it is in
            return listen.resets or any(abs(to_seconds(e.header.stamp) - stamp) < 1e-6
                                        for e in listen.estimates[-3:])
        spin_until(ros_node, scored, what=f"the node to score the frame at {stamp:.1f} s",
                   processes=[node])
        return listen.estimates[-1]

    first_estimate = show(0.3, 0.05)
    assert first_estimate.stage_index == 0
    assert first_estimate.header.frame_id == "camera_color_optical_frame"  # the camera's frame
    # Stage 0 needs 2 success votes of 3: the first success frame votes, the second confirms.
    assert not show(0.95, 0.95).success
    confirming = show(0.95, 0.95)
    assert confirming.success and confirming.stage_index == 0
    spin_until(ros_node, lambda: any(s.status == TaskState.STATUS_STAGE_SUCCEEDED
                                     for s in listen.states),
               what="the stage-succeeded state", processes=[node])
    advanced = [s for s in listen.states if s.status == TaskState.STATUS_STAGE_SUCCEEDED]
    assert advanced[0].episode_id == episode and advanced[0].stage_index == 1
    first = show(0.2, 0.0)
    assert (first.stage_index, first.instruction) == (1, "put the cup in it")
    # The next stage's window starts after the frame that finished stage 0.
    assert [to_seconds(s) for s in first.frame_stamps] == [pytest.approx(clock["t"])]
    show(0.97, 0.97)
    last = show(0.97, 0.97)
    assert last.success and last.stage_index == 1
    spin_until(ros_node, lambda: listen.resets, what="the reset request", processes=[node])
    assert listen.resets[0].episode_id == episode
    assert listen.resets[0].status == TaskState.STATUS_SUCCEEDED
    spin_until(ros_node, lambda: resets_called, what="the controller's reset service call",
               processes=[node])
    # The state is a topic of its own: it may come after the reset request and the call.
    spin_until(ros_node, lambda: any(s.status == TaskState.STATUS_SUCCEEDED for s in listen.states),
               what="the succeeded state", processes=[node])
    ended = [s for s in listen.states if s.status == TaskState.STATUS_SUCCEEDED]
    assert ended[-1].episode_id == episode
    success = [e for e in listen.estimates if e.success]
    assert [e.stage_index for e in success] == [0, 1]
    assert success[-1].reward > 1.0  # progress plus the terminal success bonus
    # A controller that joins (or restarts) now: the current state only, and no old reset
    # request, even when it asks for history (transient local, depth 10).
    late_states, late_resets = [], []
    ros_node.create_subscription(TaskState, "task_state", late_states.append, LATCHED_LISTENER_QOS)
    ros_node.create_subscription(ResetRequest, "reset_request", late_resets.append,
                                 LATCHED_LISTENER_QOS)
    spin_until(ros_node, lambda: late_states, what="the latched state", processes=[node])
    seen = len(listen.diagnostics)
    spin_until(ros_node, lambda: len(listen.diagnostics) >= seen + 2,
               what="two diagnostics periods after the late subscriptions", processes=[node])
    assert [(s.episode_id, s.status) for s in late_states] == [(episode, TaskState.STATUS_SUCCEEDED)]
    assert late_resets == []
    assert node.interrupt() == 0, node.output()


def test_missing_controller_service_is_reported_and_the_episode_still_ends(ros_node, spawn):
    node = spawn(reward_node_argv("inference.rate_hz:=20.0", "reset.service:=/nobody/reset",
                                  "reset.timeout_sec:=0.2", "reset.retries:=1",
                                  "window.min_interval_sec:=0.0", "instruction:=stack the cups"),
                 env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = ros_node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
    listen.wait_until_heard(ros_node, node)  # the reset request is sent once
    clock = {"t": 50.0}

    def show_success():
        clock["t"] += 0.1
        camera.publish(rgb_image(painted(0.95, 0.95), clock["t"]))
        return bool(listen.resets)

    spin_until(ros_node, show_success, what="episode end", processes=[node])
    spin_until(ros_node, lambda: (listen.diagnostic("controller reset", "failed") or "0") != "0",
               what="the failed reset in diagnostics", processes=[node])
    assert "not available" in listen.diagnostic("controller reset", "last_error")
    assert listen.states[-1].status == TaskState.STATUS_SUCCEEDED
    assert node.interrupt() == 0
    assert "reset for episode" in node.output() and "failed after 2 attempt(s)" in node.output()


def test_late_joiner_picks_up_the_latched_task(ros_node, spawn):
    task_pub = ros_node.create_publisher(TaskSpec, "task", LATCHED_QOS)
    task_pub.publish(TaskSpec(stages=[StageSpec(instruction="wipe the table")]))
    listen = Listener(ros_node)
    node = spawn(reward_node_argv(), env=SCRIPTED_ENV)
    spin_until(ros_node, lambda: any(s.instruction == "wipe the table" for s in listen.states),
               what="the node to adopt the task published before it started", processes=[node])
    # No frame yet: the episode is set up and starts with the first frame (its stamp is the
    # episode's time origin, whatever clock the camera uses).
    waiting = listen.states[-1]
    assert waiting.status == TaskState.STATUS_IDLE and "first camera frame" in waiting.reason
    camera = ros_node.create_publisher(Image, "camera/image_raw", qos_profile_sensor_data)
    frame = rgb_image(painted(0.1, 0.0), 42.0)
    spin_until(ros_node, lambda: camera.publish(frame) or (
        listen.states[-1].status == TaskState.STATUS_RUNNING), what="the episode to start",
        processes=[node])
    assert listen.states[-1].episode_id == waiting.episode_id
    assert to_seconds(listen.states[-1].header.stamp) == 42.0
    assert node.interrupt() == 0


def test_every_encoding_compressed_images_and_two_cameras(ros_node, spawn):
    import io

    from PIL import Image as PilImage
    from sensor_msgs.msg import CompressedImage

    node = spawn(reward_node_argv(
        'cameras.topics:=["front/image_raw", "wrist/image_raw/compressed"]',
        "inference.rate_hz:=20.0", "window.min_interval_sec:=0.0", "instruction:=stack the cups",
        "success.threshold:=1.0"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    front = ros_node.create_publisher(Image, "front/image_raw", qos_profile_sensor_data)
    wrist = ros_node.create_publisher(CompressedImage, "wrist/image_raw/compressed",
                                      qos_profile_sensor_data)
    clock = {"t": 10.0}
    for encoding, progress in [("rgb8", 0.2), ("bgr8", 0.4), ("rgba8", 0.6), ("bgra8", 0.8),
                               ("mono8", 0.5)]:
        expected = progress

        def sent_and_seen(encoding=encoding, progress=progress, expected=expected):
            clock["t"] += 0.05
            rgb = painted(progress, 0.1)
            if encoding == "mono8":  # a grey frame: red == green == grey level
                rgb = np.full_like(rgb, int(round(progress * 255)))
            front.publish(rgb_image(rgb, clock["t"], encoding))
            return any(e.camera == "front/image_raw" and abs(e.progress - expected) < 0.01
                       for e in listen.estimates[-3:])

        spin_until(ros_node, sent_and_seen, what=f"an estimate from a {encoding} frame",
                   processes=[node])

    def png(progress, success):
        buffer = io.BytesIO()
        PilImage.fromarray(painted(progress, success)).save(buffer, format="PNG")
        return buffer.getvalue()

    def compressed_seen():
        clock["t"] += 0.05
        msg = CompressedImage(format="rgb8; png compressed rgb8", data=png(0.7, 0.2))
        msg.header.stamp = to_time(clock["t"])
        wrist.publish(msg)
        return any(e.camera == "wrist/image_raw" and abs(e.progress - 0.7) < 0.01
                   for e in listen.estimates)

    spin_until(ros_node, compressed_seen, what="an estimate from the compressed camera",
               processes=[node])
    spin_until(ros_node, lambda: listen.diagnostic("camera wrist/image_raw", "transport"),
               what="diagnostics of the compressed camera", processes=[node])
    assert listen.diagnostic("camera wrist/image_raw", "transport") == "compressed"
    assert node.interrupt() == 0, node.output()


def test_preference_service_compares_two_clips(ros_node, spawn):
    node = spawn(reward_node_argv(), env=SCRIPTED_ENV)
    compare = ros_node.create_client(ComparePreference, "/reward_node/compare_preference")
    better = [rgb_image(painted(p, 0.0), 1.0 + i) for i, p in enumerate((0.2, 0.6, 0.9))]
    worse = [rgb_image(painted(p, 0.0), 1.0 + i) for i, p in enumerate((0.2, 0.3, 0.3))]
    reply = call(ros_node, compare, ComparePreference.Request(
        instruction="stack the cups", trajectory_a=worse, trajectory_b=better), [node])
    assert reply.success and not reply.a_preferred and reply.probability_a_better < 0.5
    assert reply.backend == "pixel_scripted"
    empty = call(ros_node, compare, ComparePreference.Request(
        instruction="stack the cups", trajectory_a=[], trajectory_b=better), [node])
    assert not empty.success and "at least one frame" in empty.message
    assert node.interrupt() == 0


def test_the_node_keeps_serving_while_a_comparison_runs(ros_node, spawn, tmp_path):
    """Check that frames, timers and other services go on while compare_preference is awaited."""
    from lifecycle_msgs.srv import GetState
    gate = tmp_path / "release"
    node = spawn(reward_node_argv(), env={**SCRIPTED_ENV, "PIXEL_SCRIPTED_PREFER_GATE": str(gate)})
    listen = Listener(ros_node)
    compare = ros_node.create_client(ComparePreference, "/reward_node/compare_preference")
    clip = [rgb_image(painted(p, 0.0), 1.0 + i) for i, p in enumerate((0.2, 0.6))]
    spin_until(ros_node, compare.service_is_ready, what="the preference service", processes=[node])
    pending = compare.call_async(ComparePreference.Request(
        instruction="stack the cups", trajectory_a=clip, trajectory_b=clip))
    seen = len(listen.diagnostics)
    spin_until(ros_node, lambda: len(listen.diagnostics) >= seen + 2,
               what="diagnostics while the comparison runs", processes=[node])
    state = call(ros_node, ros_node.create_client(GetState, "/reward_node/get_state"),
                 GetState.Request(), [node])
    assert state.current_state.label == "active" and not pending.done()
    gate.write_text("go")
    spin_until(ros_node, pending.done, what="the comparison's reply", processes=[node])
    assert pending.result().success
    assert node.interrupt() == 0, node.output()


def test_config_file_lists_exactly_the_declared_parameters(ros_node, spawn):
    node = spawn([installed_executable("reward_node"), "--ros-args", "--params-file", CONFIG,
                  "-p", "autostart:=false"])
    client = ros_node.create_client(ListParameters, "/reward_node/list_parameters")
    declared = set(call(ros_node, client, ListParameters.Request(), [node]).result.names)
    # Every rclpy node has these; they are not ours to document.
    declared -= {"use_sim_time", "start_type_description_service"}
    with open(CONFIG) as handle:
        documented = yaml.safe_load(handle)["/**"]["ros__parameters"]
    assert declared == set(documented) == {spec.name for spec in SPECS}
    assert {spec.name: spec.default for spec in SPECS} == documented
    assert node.interrupt() == 0
    with open(os.path.join(os.path.dirname(PACKAGE_ROOT), "README.md")) as handle:
        readme = handle.read()
    assert [s.name for s in SPECS if f"| `{s.name}` |" not in readme] == []


@pytest.mark.parametrize("autostart", ["true", "false"])
def test_runtime_parameters_are_validated_and_read_only_ones_refused(ros_node, spawn, autostart):
    """Also before configure (autostart:=false; or while the model loads): configure reads them."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import GetParameters, SetParameters

    node = spawn(reward_node_argv(f"autostart:={autostart}"), env=SCRIPTED_ENV)
    client = ros_node.create_client(SetParameters, "/reward_node/set_parameters")

    def set_int(name, value):
        request = SetParameters.Request(parameters=[Parameter(name=name, value=ParameterValue(
            type=ParameterType.PARAMETER_INTEGER, integer_value=value))])
        return call(ros_node, client, request, [node]).results[0]

    refused = set_int("success.k", 9)  # more votes than estimates counted (n = 3)
    assert not refused.successful and "success.k must be in [1, success.n]" in refused.reason
    out_of_range = set_int("success.n", 1000)
    assert not out_of_range.successful
    assert set_int("success.k", 3).successful
    read_only = set_int("window.max_frames", 8)
    assert not read_only.successful and "read-only" in read_only.reason
    # A peer on the graph wrecking training (before: accepted, the range was +-1e9).
    bonus = call(ros_node, client, SetParameters.Request(parameters=[Parameter(
        name="reward.success_bonus", value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                          double_value=1e9))]), [node]).results[0]
    assert not bonus.successful and "reward.success_bonus" in bonus.reason, bonus.reason
    kept = call(ros_node, ros_node.create_client(GetParameters, "/reward_node/get_parameters"),
                GetParameters.Request(names=["reward.success_bonus"]), [node])
    assert kept.values[0].double_value == 1.0
    assert node.interrupt() == 0


def test_a_node_that_cannot_load_its_model_stays_up_and_says_why(ros_node, spawn, tmp_path):
    node = spawn([installed_executable("reward_node"), "--ros-args", "-p", 'model.preset:=""',
                  "-p", f"model.id:={tmp_path / 'no_such_model'}", "-p", "model.backend:=robometer"])
    listen = Listener(ros_node)
    spin_until(ros_node, lambda: listen.diagnostic(": model", "loaded") == "False",
               what="the model status in diagnostics", processes=[node])
    status = [s for a in listen.diagnostics for s in a.status if s.name.endswith(": model")][-1]
    assert status.level == b"\x02" and "configure failed" in status.message
    assert "no_such_model" in status.message
    assert node.popen.poll() is None  # still running, unconfigured
    assert node.interrupt() == 0


def test_a_namespaced_node_takes_the_installed_params_file_layout_and_says_who_it_is(
        ros_node, spawn, tmp_path):
    """Check that a user's copy of config/reward.yaml applies under a namespace.

    And /diagnostics names the node fully (/robot1/reward_node), so two robots' reports can be
    told apart.
    """
    from rcl_interfaces.srv import GetParameters
    with open(CONFIG) as handle:
        settings = yaml.safe_load(handle)
    (key,) = settings
    values = settings[key]["ros__parameters"]
    values.update({"inference.rate_hz": 7.0, "success.k": 1})
    user_file = tmp_path / "robot1.yaml"
    user_file.write_text(yaml.safe_dump(settings))
    node = spawn(reward_node_argv() + ["-r", "__ns:=/robot1", "--params-file", str(user_file)]
                 + SCRIPTED_MODEL_ARGS, env=SCRIPTED_ENV)
    client = ros_node.create_client(GetParameters, "/robot1/reward_node/get_parameters")
    reply = call(ros_node, client, GetParameters.Request(names=["inference.rate_hz", "success.k"]),
                 [node])
    assert [reply.values[0].double_value, reply.values[1].integer_value] == [7.0, 1]
    listen = Listener(ros_node)
    spin_until(ros_node, lambda: listen.diagnostic("/robot1/reward_node: model", "loaded"),
               what="the namespaced node's diagnostics", processes=[node])
    names = {s.name for a in listen.diagnostics for s in a.status}
    assert names and all(name.startswith("/robot1/reward_node: ") for name in names), names
    assert node.interrupt() == 0, node.output()
