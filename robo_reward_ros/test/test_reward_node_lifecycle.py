# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The managed node with a real (tiny) Robometer checkpoint and a 30 Hz camera in another process.

Its lifecycle is driven through the standard lifecycle services, as a lifecycle manager would.
"""
import os
import re
import shutil
import signal
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from robo_reward_msgs.msg import RewardEstimate
from sensor_msgs.msg import Image

from robo_reward_ros.core.stamps import to_seconds
from ros_fixtures import installed_executable, spin_until
from test_reward_node import call

MODEL_LOAD_TIMEOUT_SEC = 120.0


def test_configure_activate_deactivate_cleanup_configure(ros_node, spawn, tiny_robometer_dir, tmp_path):
    """The second cycle loads another checkpoint (a fine-tuned one, say) set while unconfigured: no restart."""
    retrained = str(tmp_path / "retrained")
    shutil.copytree(tiny_robometer_dir, retrained)
    camera = spawn([installed_executable("synthetic_camera"), "--ros-args", "-p", "rate_hz:=30.0"])
    node = spawn([installed_executable("reward_node"), "--ros-args",
                  "-p", "autostart:=false", "-p", 'model.preset:=""',
                  "-p", f"model.id:={tiny_robometer_dir}", "-p", "model.backend:=robometer",
                  "-p", "model.precision:=fp32", "-p", "model.device:=cpu",
                  "-p", "inference.rate_hz:=5.0", "-p", 'episode_log.directory:=""',
                  "-p", "instruction:=put the red block on the green square"])
    processes = [camera, node]
    estimates, frames, diagnostics = [], [], []
    ros_node.create_subscription(RewardEstimate, "reward", estimates.append, 50)
    ros_node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    ros_node.create_subscription(Image, "camera/image_raw",
                                 lambda m: frames.append(to_seconds(m.header.stamp)),
                                 QoSProfile(depth=500, reliability=ReliabilityPolicy.BEST_EFFORT))
    change = ros_node.create_client(ChangeState, "/reward_node/change_state")
    get = ros_node.create_client(GetState, "/reward_node/get_state")

    def transition(transition_id, expected_state):
        # Configure loads the model before it answers: a few seconds alone, over 30 s once with
        # three test workers on two cores.
        reply = call(ros_node, change, ChangeState.Request(
            transition=Transition(id=transition_id)), processes, timeout=MODEL_LOAD_TIMEOUT_SEC)
        assert reply.success, node.output()
        assert call(ros_node, get, GetState.Request(), processes).current_state.id == \
            expected_state

    def model_loaded():
        for array in reversed(diagnostics):
            for status in array.status:
                if status.name.endswith(": model"):
                    return {kv.key: kv.value for kv in status.values}["loaded"] == "True"
        return None

    assert call(ros_node, get, GetState.Request(), processes).current_state.id == \
        State.PRIMARY_STATE_UNCONFIGURED  # autostart is off
    set_parameters = ros_node.create_client(SetParameters, "/reward_node/set_parameters")

    def set_model_id(path):
        request = SetParameters.Request(parameters=[Parameter("model.id", value=path).to_parameter_msg()])
        return call(ros_node, set_parameters, request, processes).results[0]

    for cycle, checkpoint in enumerate((tiny_robometer_dir, retrained)):
        assert set_model_id(checkpoint).successful  # unconfigured: read at the next configure
        transition(Transition.TRANSITION_CONFIGURE, State.PRIMARY_STATE_INACTIVE)
        diagnostics.clear()
        spin_until(ros_node, lambda: model_loaded() is True, what="the loaded model",
                   processes=processes)
        transition(Transition.TRANSITION_ACTIVATE, State.PRIMARY_STATE_ACTIVE)
        seen = len(estimates)
        spin_until(ros_node, lambda: len(estimates) >= seen + 3,
                   what=f"estimates from the tiny Robometer (cycle {cycle})", processes=processes)
        estimate = estimates[-1]
        assert estimate.backend == "robometer" and estimate.precision == "fp32"
        assert estimate.model_id == checkpoint
        refused = set_model_id(retrained)
        assert not refused.successful and "deactivate and clean up the node first" in refused.reason
        # Stamped with the newest frame it used, a frame of this camera run (this test's own
        # best-effort subscription may miss frames on a loaded machine, so no exact lookup).
        assert estimate.header.stamp == estimate.frame_stamps[-1]
        assert to_seconds(estimate.header.stamp) >= min(frames)
        # Up to 8 frames selected from the stage window (fewer early on: scored as they are).
        assert estimate.has_success_probability
        assert 1 <= len(estimate.frame_progress) == len(estimate.frame_stamps) <= 8
        assert all(0.0 <= p <= 1.0 for p in estimate.frame_progress)

        transition(Transition.TRANSITION_DEACTIVATE, State.PRIMARY_STATE_INACTIVE)
        # Re-activated, the task goes on in a new episode without a start_episode call.
        episode = estimates[-1].episode_id
        transition(Transition.TRANSITION_ACTIVATE, State.PRIMARY_STATE_ACTIVE)
        spin_until(ros_node, lambda: estimates[-1].episode_id != episode,
                   what=f"estimates of a new episode after re-activation (cycle {cycle})",
                   processes=processes)
        transition(Transition.TRANSITION_DEACTIVATE, State.PRIMARY_STATE_INACTIVE)
        # Deactivated: the node no longer listens to the camera (only this test does).
        spin_until(ros_node, lambda: ros_node.count_subscribers("camera/image_raw") == 1,
                   what="the node's camera subscription to go", processes=processes)
        transition(Transition.TRANSITION_CLEANUP, State.PRIMARY_STATE_UNCONFIGURED)
        diagnostics.clear()
        spin_until(ros_node, lambda: model_loaded() is False, what="the model to be freed",
                   processes=processes)
    # The same swap in one call, as a controller that fine-tunes its reward model makes it
    # (RewardClient.reload_model): from unconfigured (here), after a checkpoint that does not
    # load (refused with an error, the node left unconfigured), and from active.
    from robo_reward_ros.client import RewardClient, RewardNodeError
    with RewardClient() as client:
        with pytest.raises(RewardNodeError, match="refused"):
            client.reload_model(str(tmp_path / "no-such-checkpoint"), timeout_sec=120.0)
        for checkpoint in (retrained, tiny_robometer_dir):
            seen = len(estimates)
            client.reload_model(checkpoint, timeout_sec=120.0)
            assert call(ros_node, get, GetState.Request(), processes).current_state.id == State.PRIMARY_STATE_ACTIVE
            spin_until(ros_node, lambda: len(estimates) > seen and estimates[-1].model_id == checkpoint,
                       what=f"estimates from {checkpoint} after reload_model", processes=processes)
    for process in processes:
        assert process.interrupt() == 0, process.output()


def _proc_status(pid):
    with open(f"/proc/{pid}/status") as handle:
        fields = dict(line.split(":", 1) for line in handle if ":" in line)
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0])  # threads, kB


def test_twenty_lifecycle_cycles_leak_no_threads_or_memory(ros_node, spawn):
    from robo_reward_ros.node.reward_node import EXECUTOR_THREADS
    from ros_fixtures import SCRIPTED_ENV, reward_node_argv

    node = spawn(reward_node_argv("autostart:=false", 'reset.service:=/controller/reset',
                                  "instruction:=stack the cups"), env=SCRIPTED_ENV)
    change = ros_node.create_client(ChangeState, "/reward_node/change_state")

    def cycle():
        for transition in (Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE,
                           Transition.TRANSITION_DEACTIVATE, Transition.TRANSITION_CLEANUP):
            reply = call(ros_node, change, ChangeState.Request(
                transition=Transition(id=transition)), [node])
            assert reply.success, node.output()

    cycle()
    threads_after_first, rss_after_first = _proc_status(node.popen.pid)
    for _ in range(19):
        cycle()
    threads, rss = _proc_status(node.popen.pid)
    print(f"threads {threads_after_first} -> {threads}, RSS {rss_after_first} -> {rss} kB")
    # Inference, reset and model-load threads end every cycle; the executor's pool starts its
    # threads on demand, up to EXECUTOR_THREADS, so a few may appear late, never one per cycle.
    assert threads - threads_after_first < EXECUTOR_THREADS
    assert rss - rss_after_first < 8 * 1024  # under 8 MB over 19 more cycles
    assert node.interrupt() == 0, node.output()


def _model_status(diagnostics):
    for array in reversed(diagnostics):
        for status in array.status:
            if status.name == "/reward_node: model":
                return status
    return None


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_the_node_answers_while_its_model_loads_and_a_signal_ends_the_load(
        ros_node, spawn, tmp_path, stop_signal):
    """Before: the load ran on the only executor thread, inside the constructor (autostart).

    get_state got no answer, /diagnostics was silent, and a signal only set a flag the node saw
    once the load ended (here: never), so launch had to SIGKILL it.
    """
    from ros_fixtures import SCRIPTED_ENV, reward_node_argv
    gate = tmp_path / "load-gate"  # never created: the load never ends on its own
    node = spawn(reward_node_argv("instruction:=stack the cups"),
                 env={**SCRIPTED_ENV, "PIXEL_SCRIPTED_LOAD_GATE": str(gate)})
    diagnostics = []
    ros_node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    get = ros_node.create_client(GetState, "/reward_node/get_state")

    def loading_for():
        status = _model_status(diagnostics)
        values = {} if status is None else {kv.key: kv.value for kv in status.values}
        return float(values.get("loading_for_sec", "0"))

    spin_until(ros_node, lambda: loading_for() >= 1.0,
               what="/diagnostics reporting the load a second in", processes=[node])
    status = _model_status(diagnostics)
    assert re.fullmatch(r"loading pixel_scripted \(\d+ s\)", status.message), status.message
    assert status.level == DiagnosticStatus.WARN
    assert call(ros_node, get, GetState.Request(), [node]).current_state.id == \
        State.TRANSITION_STATE_CONFIGURING
    assert "loading model pixel_scripted (backend pixel_scripted, precision bf16, device auto" \
        in node.output()
    started = time.monotonic()
    node.popen.send_signal(stop_signal)
    assert node.interrupt(timeout=10.0) == 0, node.output()
    print(f"{stop_signal.name} during the load: exit 0 after {time.monotonic() - started:.2f} s")
    assert "configure abandoned: the node is shutting down while the model loads" in node.output()
    assert "activated" not in node.output() and "loaded in" not in node.output()


def test_a_node_whose_load_ends_goes_on_to_score(ros_node, spawn, tmp_path):
    from ros_fixtures import SCRIPTED_ENV, reward_node_argv
    gate = tmp_path / "load-gate"
    camera = spawn([installed_executable("synthetic_camera"), "--ros-args", "-p", "rate_hz:=30.0"])
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=5.0"),
                 env={**SCRIPTED_ENV, "PIXEL_SCRIPTED_LOAD_GATE": str(gate)})
    processes = [camera, node]
    diagnostics, estimates = [], []
    ros_node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    ros_node.create_subscription(RewardEstimate, "reward", estimates.append, 50)
    get = ros_node.create_client(GetState, "/reward_node/get_state")
    spin_until(ros_node, lambda: _model_status(diagnostics) is not None
               and _model_status(diagnostics).message.startswith("loading"),
               what="/diagnostics reporting the load", processes=processes)
    gate.touch()
    spin_until(ros_node, lambda: len(estimates) >= 1, what="an estimate once the load ended",
               processes=processes)
    assert call(ros_node, get, GetState.Request(), processes).current_state.id == \
        State.PRIMARY_STATE_ACTIVE
    for process in processes:
        assert process.interrupt() == 0, process.output()
    # No callback left queued in the executor's pool ran on the destroyed node.
    assert "never retrieved" not in node.output(), node.output()


def test_the_demo_preset_loads_offline_and_scores(ros_node, spawn, tmp_path):
    """``model_preset:=demo``: the model installed with the package, no network (HF_HUB_OFFLINE=1)."""
    camera = spawn([installed_executable("synthetic_camera"), "--ros-args", "-p", "rate_hz:=30.0"])
    node = spawn([installed_executable("reward_node"), "--ros-args", "-p", "model.preset:=demo",
                  "-p", "model.device:=cpu", "-p", "inference.rate_hz:=2.0",
                  "-p", 'episode_log.directory:=""', "-p", "instruction:=push the puck to the goal"],
                 env={"ROBO_REWARD_CACHE": str(tmp_path / "cache")})
    processes = [camera, node]
    estimates = []
    ros_node.create_subscription(RewardEstimate, "reward", estimates.append, 50)
    spin_until(ros_node, lambda: len(estimates) >= 2, timeout=120.0,
               what="estimates from the demo preset", processes=processes)
    assert estimates[-1].backend == "robometer" and estimates[-1].precision == "fp32"
    assert estimates[-1].model_id.endswith(os.path.join("data", "demo-robometer"))
    for process in processes:
        assert process.interrupt() == 0, process.output()
