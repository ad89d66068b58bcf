# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Faults and bad inputs against the running node (another process).

Each is reported, nothing recorded is lost, and the node keeps scoring afterwards.
"""
import json
import os
import signal
import time

from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from robo_reward_msgs.msg import FailureEvent, TaskState
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import String

from robo_reward_ros.core.episode_log import read_episode_log
from robo_reward_ros.core.stamps import to_seconds
from robo_reward_ros.node.stamps import to_time
from robo_reward_ros.node.qos_profiles import LATCHED_QOS
from ros_fixtures import (SCRIPTED_ENV, installed_executable, participant, python_script,
                          reward_node_argv, spin_until)
from scripted_backend import FAIL_BLUE, NAN_BLUE, painted
from test_image_decoding import bomb_header
from test_reward_node import Listener, rgb_image


class Camera:
    """Publishes painted frames with stamps under the test's control.

    Best effort: resent until the node confirms, never by sleeping.
    """

    def __init__(self, node, topic="camera/image_raw", start=1000.0):
        self.pub = node.create_publisher(Image, topic, qos_profile_sensor_data)
        self.stamp = start

    def frame(self, progress=0.3, success=0.0, blue=0, step=0.1, stamp=None):
        self.stamp = self.stamp + step if stamp is None else stamp
        return rgb_image(painted(progress, success, blue=blue), self.stamp)


def spin_publishing(ros_node, publish, condition, what, node):
    spin_until(ros_node, lambda: publish() or condition(), what=what, processes=[node])


def test_bad_frames_each_get_a_reason_and_scoring_goes_on(ros_node, spawn):
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  'cameras.topics:=["camera/image_raw", "wrist/compressed"]'),
                 env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    wrist = ros_node.create_publisher(CompressedImage, "wrist/compressed",
                                      qos_profile_sensor_data)
    # A new frame each time: a frame already scored is not scored again.
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame()), lambda: listen.estimates,
                    "a first estimate", node)
    bad_raw = {
        "unsupported encoding '16UC1'": Image(height=2, width=2, encoding="16UC1", step=4,
                                              data=bytes(8)),
        "unsupported encoding 'yuv422'": Image(height=2, width=2, encoding="yuv422", step=4,
                                               data=bytes(8)),
        "unsupported encoding 'bayer_rggb8'": Image(height=2, width=2, encoding="bayer_rggb8",
                                                    step=2, data=bytes(4)),
        "data has 11 bytes": Image(height=2, width=2, encoding="rgb8", step=6, data=bytes(11)),
        "data has 13 bytes": Image(height=2, width=2, encoding="rgb8", step=6, data=bytes(13)),
        "step 5 < width 2 x 3": Image(height=2, width=2, encoding="rgb8", step=5, data=bytes(10)),
        "empty image 0x2": Image(height=2, width=0, encoding="rgb8", step=0, data=b""),
        # An 8K header: refused on its size before any pixel is touched (the 33 MB of pixels
        # themselves would not survive best-effort UDP transport in a test anyway).
        "exceeds the": Image(height=4320, width=7680, encoding="mono8", step=7680,
                             data=bytes(64)),
        "zero stamp": rgb_image(painted(0.3, 0.0), 0.0),
    }
    for reason, msg in bad_raw.items():
        if reason != "zero stamp":
            msg.header.stamp = to_time(camera.stamp + 0.05)
        spin_publishing(ros_node, lambda m=msg: camera.pub.publish(m),
                        lambda r=reason: r in (listen.diagnostic("camera camera/image_raw",
                                                                 "last_error") or ""),
                        f"the node to refuse a frame: {reason}", node)
    bad_compressed = {
        "corrupt or truncated jpeg": CompressedImage(format="jpeg", data=b"\xff\xd8\xff" + bytes(40)),
        "unknown compression format 'theora'": CompressedImage(format="theora", data=bytes(10)),
        # Pillow's DecompressionBombError was "callback failed" and not counted.
        "jpeg declares an image over": CompressedImage(format="jpeg", data=bomb_header("jpeg")),
        "empty png data (0 bytes)": CompressedImage(format="png", data=b""),
    }
    for reason, msg in bad_compressed.items():
        msg.header.stamp = to_time(camera.stamp)
        spin_publishing(ros_node, lambda m=msg: wrist.publish(m),
                        lambda r=reason: r in (listen.diagnostic("camera wrist", "last_error") or ""),
                        f"the node to refuse a compressed frame: {reason}", node)
    # Every refusal went through the counted path.
    assert int(listen.diagnostic("camera wrist", "frames_rejected")) >= len(bad_compressed)
    # Still scoring: a good frame after all that gives an estimate with its stamp.
    after = camera.frame(progress=0.5)
    spin_publishing(ros_node, lambda: camera.pub.publish(after),
                    lambda: any(e.header.stamp == after.header.stamp for e in listen.estimates),
                    "an estimate after the bad frames", node)
    assert node.interrupt() == 0, node.output()


def test_stamps_back_or_far_ahead_are_refused_and_a_new_timeline_restarts_the_episode(
        ros_node, spawn):
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  "cameras.new_timeline_frames:=5"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = Camera(ros_node, start=5000.0)
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame()), lambda: listen.estimates,
                    "a first estimate", node)
    episode = listen.estimates[-1].episode_id
    back = rgb_image(painted(0.3, 0.0), 4000.0)
    spin_publishing(ros_node, lambda: camera.pub.publish(back),
                    lambda: "went back" in (listen.diagnostic("camera camera/image_raw",
                                                              "last_error") or ""),
                    "a refused stamp that went back", node)
    ahead = rgb_image(painted(0.3, 0.0), 9000.0)
    spin_publishing(ros_node, lambda: camera.pub.publish(ahead),
                    lambda: "jumped" in (listen.diagnostic("camera camera/image_raw",
                                                           "last_error") or ""),
                    "a refused stamp far ahead", node)
    # A bag that loops: the stream continues at 10 s and stays there -> a new episode.
    camera.stamp = 10.0
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame()),
                    lambda: any(e.episode_id != episode for e in listen.estimates),
                    "an estimate in a new episode on the new timeline", node)
    new = [e for e in listen.estimates if e.episode_id != episode][-1]
    assert to_seconds(new.header.stamp) < 100.0
    assert all(to_seconds(s) < 100.0 for s in new.frame_stamps)  # no frame of the old clock
    spin_until(ros_node, lambda: any(
        s.episode_id == episode and s.status == TaskState.STATUS_IDLE and
        "camera clock changed" in s.reason for s in listen.states),
        what="the old episode's end, with the reason", processes=[node])
    assert node.interrupt() == 0, node.output()


def test_bad_instructions_and_tasks_are_refused_and_the_task_stays(ros_node, spawn):
    from rclpy.serialization import serialize_message

    node = spawn(reward_node_argv("instruction:=stack the cups"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    instruction = ros_node.create_publisher(String, "instruction", LATCHED_QOS)
    spin_until(ros_node, lambda: instruction.get_subscription_count() > 0,
               what="the node's instruction subscription", processes=[node])
    raw = bytearray(serialize_message(String(data="open the drawer")))
    start = bytes(raw).index(b"open")
    raw[start:start + 2] = b"\xff\xfe"  # not UTF-8
    cases = {
        "empty instruction": String(data=""),
        "instruction has 5000 characters": String(data="x" * 5000),
        "not valid UTF-8": bytes(raw),
        # Before: accepted as tasks (nothing to see in them).
        "instruction has no visible character": String(data="\u200b" * 5),
        "instruction has no visible character (\\x01\\x02\\x03)": String(data="\x01\x02\x03"),
    }
    for reason, msg in cases.items():
        spin_publishing(ros_node, lambda m=msg: instruction.publish(m),
                        lambda r=reason: r in (listen.diagnostic(": task", "last_error") or ""),
                        f"the node to refuse: {reason}", node)
    state = listen.states[-1]
    assert state.instruction == "stack the cups"  # the running task was not replaced
    # A newline and ANSI codes in an instruction: one log line, escaped (before: a forged line).
    forged = "open the drawer\n[ERROR] [1.0] [reward_node]: FAKE: model exploded\x1b[31m"
    spin_publishing(ros_node, lambda: instruction.publish(String(data=forged)),
                    lambda: listen.states and listen.states[-1].instruction == forged,
                    "the node to take the instruction", node)
    assert node.interrupt() == 0, node.output()
    output = node.output()
    assert "FAKE" in output
    assert not any(line.lstrip().startswith("[ERROR] [1.0]") for line in output.splitlines())
    assert "\x1b" not in output and "drawer\\n[ERROR] [1.0] [reward_node]: FAKE" in output


def test_model_failures_become_one_model_error_event_and_scoring_resumes(ros_node, spawn):
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  "inference.error_report_after:=3",
                                  "inference.error_backoff_sec:=0.05",
                                  "inference.error_backoff_max_sec:=0.1"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    listen.wait_until_heard(ros_node, node)  # the model-error event is sent once
    for blue, what in ((FAIL_BLUE, "CUDA out of memory"), (NAN_BLUE, "non-finite")):
        failing = camera.frame(blue=blue)
        spin_publishing(ros_node, lambda f=failing: camera.pub.publish(f),
                        lambda w=what: any(f.kind == FailureEvent.KIND_MODEL_ERROR and
                                           w in f.description for f in listen.failures),
                        f"a model-error event ({what})", node)
        event = [f for f in listen.failures if what in f.description][-1]
        assert not event.task_failure and not event.terminal
        assert listen.states[-1].status == TaskState.STATUS_RUNNING  # not a task failure
        healthy = camera.frame(progress=0.4)
        spin_publishing(ros_node, lambda h=healthy: camera.pub.publish(h),
                        lambda h=healthy: any(e.header.stamp == h.header.stamp
                                              for e in listen.estimates),
                        "scoring to resume", node)
    spin_until(ros_node, lambda: int(listen.diagnostic(": model", "model_errors_total") or 0) >= 6,
               what="the model errors counted in diagnostics", processes=[node])
    assert node.interrupt() == 0, node.output()


def test_camera_stops_is_reported_stale_without_a_task_failure_and_resumes(ros_node, spawn,
                                                                           tmp_path):
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  f"episode_log.directory:={tmp_path}",
                                  "cameras.stale_after_sec:=0.5",
                                  "failure.stall_window_sec:=1.0",
                                  "failure.low_progress_grace_sec:=100.0"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    # Progress rises steadily (0.1 per second of frame time) while the camera runs: no stall.
    progress = {"p": 0.1}

    def rising():
        progress["p"] = min(0.95, progress["p"] + 0.01)
        camera.pub.publish(camera.frame(progress=progress["p"]))

    spin_publishing(ros_node, rising, lambda: len(listen.estimates) >= 5, "estimates", node)
    # The camera goes silent (nothing published) until the node reports it stale.
    spin_until(ros_node, lambda: any(f.kind == FailureEvent.KIND_CAMERA_STALE
                                     for f in listen.failures),
               what="a camera-stale event", processes=[node])
    stale = [f for f in listen.failures if f.kind == FailureEvent.KIND_CAMERA_STALE][0]
    assert not stale.task_failure and not stale.terminal
    # Silent for longer than the stall window, so a clock that counted the gap would stall.
    # A number only: CI once read "n/a" here, the value of a camera that never had a frame, so
    # from another publisher of /diagnostics (this node's camera had frames; see Listener).
    spin_until(ros_node, lambda: (listen.number("camera camera/image_raw",
                                                "time_since_last_frame_sec") or 0.0) > 1.5,
               what="a silence longer than the stall window", processes=[node],
               lacking=listen.diagnostic_publishers)
    # It comes back (its stamps continue where the gap ended): scoring resumes.
    seen = len(listen.estimates)
    spin_publishing(ros_node, rising, lambda: len(listen.estimates) >= seen + 3,
                    "estimates after the camera came back", node)
    task_failures = [f for f in listen.failures if f.task_failure]
    assert task_failures == [], [f.description for f in task_failures]
    assert node.interrupt() == 0, node.output()


def test_a_model_ten_times_slower_than_the_camera_never_queues(ros_node, spawn):
    delay = 0.3  # the camera below runs at ~30 Hz: 10x faster than the model
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=100.0",
                                  "window.min_interval_sec:=0.0"),
                 env={**SCRIPTED_ENV, "PIXEL_SCRIPTED_DELAY_SEC": str(delay)})
    listen = Listener(ros_node)
    camera = Camera(ros_node, start=100.0)
    last_publish = {"t": 0.0}

    def camera_at_30hz():
        now = time.monotonic()
        if now - last_publish["t"] >= 1.0 / 30.0:
            last_publish["t"] = now
            camera.pub.publish(camera.frame(step=1.0 / 30.0))

    spin_publishing(ros_node, camera_at_30hz, lambda: len(listen.estimates) >= 6,
                    "six estimates from the slow model", node)
    newest = [to_seconds(e.header.stamp) for e in listen.estimates]
    # Latest wins: each step scored the newest frame, skipping those that came meanwhile (~9 at
    # 30 Hz), never a backlog of old frames one after the other (a queue scores every frame: gaps
    # of one camera period). At least one frame skipped per step: a loaded test process
    # published only 2 frames in one 0.3 s step once (CI, 2026-12-07), so 3 was the test's pace.
    gaps = [b - a for a, b in zip(newest, newest[1:])]
    assert min(gaps) >= 2.0 / 30.0 - 1e-6, gaps  # stamps travel as integer nanoseconds
    assert node.interrupt() == 0, node.output()


def test_qos_mismatch_on_the_camera_topic_is_reported(ros_node, spawn):
    node = spawn(reward_node_argv("cameras.qos.reliability:=reliable"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    best_effort = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
    ros_node.create_publisher(Image, "camera/image_raw", best_effort)
    spin_until(ros_node, lambda: "QoS incompatible" in (
        listen.diagnostic("camera camera/image_raw", "last_error") or ""),
        what="the QoS mismatch in diagnostics", processes=[node])
    assert node.interrupt() == 0
    assert "QoS incompatible" in node.output() and "RELIABILITY" in node.output()


def _log_records(directory):
    """Every record of every episode log in the directory (a line torn by SIGKILL skipped)."""
    return [record for name in sorted(os.listdir(directory))
            for record in read_episode_log(os.path.join(directory, name))]


def _run_until_events(ros_node, spawn, log_dir):
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  "failure.stall_window_sec:=0.5",
                                  "failure.low_progress_grace_sec:=0.5",
                                  log_dir=log_dir), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.05)),
                    lambda: len(listen.failures) >= 2, "failure events (stall, low progress)",
                    node)
    return node, listen


def _assert_logged(listen, log_dir):
    logged = {(r.get("kind"), r.get("stamp")) for r in _log_records(log_dir)
              if r.get("type") == "FailureDetected"}
    published = {(f.kind, round(to_seconds(f.header.stamp), 6)) for f in listen.failures}
    assert published and published <= {(k, round(s, 6)) for k, s in logged}


def test_sigterm_mid_episode_closes_the_log_with_every_event(ros_node, spawn, tmp_path):
    log_dir = str(tmp_path / "episodes")
    node, listen = _run_until_events(ros_node, spawn, log_dir)
    node.popen.send_signal(signal.SIGTERM)
    assert node.popen.wait(timeout=30) == 0, node.output()
    _assert_logged(listen, log_dir)
    records = _log_records(log_dir)
    assert records[-1]["type"] == "summary" and "shutting down" in json.dumps(records[-2:])
    assert oct(os.stat(log_dir).st_mode & 0o777) == oct(0o700)


def test_ctrl_c_under_launch_sigint_twice_still_ends_cleanly(ros_node, spawn, tmp_path):
    """Check that the SIGINTs of one Ctrl-C under ros2 launch give exit 0.

    The terminal sends SIGINT to the process group and launch sends its own right after; one
    landing after the runner gave the default handler back killed the node. Signals within the
    runner's grace period are one request, however many. They come as a burst here (every 2 ms),
    so that one may land while the handler of another still runs: a handler that took a lock
    (Event.set) then waited on itself forever (seen once in a fresh-clone run: no exit in 60 s).
    """
    import subprocess

    from robo_reward_ros.node.runner import REPEAT_GRACE_SEC
    log_dir = str(tmp_path / "episodes")
    node, _ = _run_until_events(ros_node, spawn, log_dir)
    first = time.monotonic()
    sent = 0
    while node.popen.poll() is None and time.monotonic() - first < 0.5 * REPEAT_GRACE_SEC:
        try:
            os.kill(node.popen.pid, signal.SIGINT)
        except ProcessLookupError:
            break
        sent += 1
        time.sleep(0.002)
    try:
        code = node.popen.wait(timeout=60)
    except subprocess.TimeoutExpired:
        code = None
    assert code == 0, f"exit {code} after {sent} SIGINTs:\n{node.output()}"


def test_a_second_signal_while_a_model_step_is_stuck_exits_at_once(ros_node, spawn, tmp_path):
    """Before: a 20 s model step held the teardown and every further SIGINT was ignored."""
    from robo_reward_ros.node.runner import REPEAT_GRACE_SEC
    log_dir = str(tmp_path / "episodes")
    started = tmp_path / "step-started"
    node = spawn(reward_node_argv("instruction:=stack the cups", log_dir=log_dir),
                 env={**SCRIPTED_ENV, "PIXEL_SCRIPTED_DELAY_SEC": "20",
                      "PIXEL_SCRIPTED_STEP_STARTED": str(started)})
    camera = Camera(ros_node)
    # A frame in a running episode: the inference thread's step on it takes 20 s.
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame()), started.exists,
                    "a model step under way", node)
    node.popen.send_signal(signal.SIGINT)
    first = time.monotonic()
    while time.monotonic() - first < 1.5 * REPEAT_GRACE_SEC:  # the second press comes later
        assert node.popen.poll() is None, node.output()
        ros_node.test_executor.spin_once(timeout_sec=0.05)
    node.popen.send_signal(signal.SIGINT)
    assert node.popen.wait(timeout=10) == 128 + signal.SIGINT, node.output()
    print(f"exit {node.popen.returncode} {time.monotonic() - first:.2f} s after the first SIGINT")
    assert "SIGINT again while stopping: exiting now (exit code 130)" in node.output()
    records = _log_records(log_dir)  # everything written so far is there; no summary record
    assert records and records[0]["type"] == "header" and records[-1]["type"] != "summary"


def test_sigkill_mid_episode_loses_no_event_and_a_restart_starts_clean(ros_node, spawn, tmp_path):
    log_dir = str(tmp_path / "episodes")
    node, listen = _run_until_events(ros_node, spawn, log_dir)
    first_episode = listen.estimates[-1].episode_id
    node.popen.send_signal(signal.SIGKILL)
    node.popen.wait(timeout=30)
    _assert_logged(listen, log_dir)
    restarted = spawn(reward_node_argv("instruction:=stack the cups", log_dir=log_dir),
                      env=SCRIPTED_ENV)
    with participant("after_restart") as after:  # not ros_node: see participant()
        listen = Listener(after)
        camera = Camera(after, start=2000.0)
        spin_publishing(after, lambda: camera.pub.publish(camera.frame(progress=0.2)),
                        lambda: any(e.episode_id != first_episode for e in listen.estimates),
                        "estimates of a new episode after the restart", restarted)
        spin_until(after, lambda: listen.states and listen.states[-1].episode_id != first_episode,
                   what="the restarted node's task state", processes=[restarted])
    assert listen.states[-1].stage_index == 0
    assert len(os.listdir(log_dir)) == 2  # the killed episode's log is kept, a new one begun
    assert restarted.interrupt() == 0


def test_a_controller_that_never_answers_is_retried_reported_and_the_episode_ends(ros_node,
                                                                                  spawn):
    controller = spawn(python_script("stuck_controller.py"), name="stuck_controller")
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  "reset.service:=/stuck/reset", "reset.timeout_sec:=0.3",
                                  "reset.retries:=2"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(0.95, 0.95)),
                    lambda: listen.resets, "the episode end and reset request", node)
    spin_until(ros_node, lambda: (listen.diagnostic("controller reset", "failed") or "0") != "0",
               what="the timed-out reset in diagnostics", processes=[node])
    # The controller's single thread hangs in the first call, so the retries reach DDS but not
    # its callback: what counts is the node's side (three attempts, reported, episode over).
    assert "reset call 1" in controller.output()
    assert listen.diagnostic("controller reset", "attempts") == "3"
    assert "no answer from /stuck/reset within 0.3 s" in listen.diagnostic("controller reset",
                                                                           "last_error")
    assert listen.states[-1].status == TaskState.STATUS_SUCCEEDED
    assert node.interrupt() == 0, node.output()
    assert "failed after 3 attempt(s)" in node.output()


def test_out_of_range_and_unknown_start_up_parameters_keep_the_node_up_and_say_why(ros_node,
                                                                                   spawn, tmp_path):
    typo = tmp_path / "typo.yaml"  # before: silently ignored, and the node went active
    typo.write_text("reward_node:\n  ros__parameters:\n    succes.threshold: 0.5\n")
    for params, reason in (
            (["-p", "success.threshold:=1.5"], "parameter success.threshold"),
            (["-p", "inference.rate_hz:=-2.0"], "parameter inference.rate_hz"),
            (["-p", "reward.success_bonus:=1000000000.0"], "parameter reward.success_bonus"),
            (["-p", "model.precision:=fp8"], "model.precision must be one of"),
            (["-p", 'model.preset:="robometer-9000"'], "unknown model preset 'robometer-9000'"),
            (["--params-file", str(typo)],
             "unknown parameter succes.threshold (did you mean success.threshold?)"),
            (["-p", "inferenc.rate:=3.0"], "unknown parameter inferenc.rate (did you mean "
                                           "inference.rate_hz?)")):
        node = spawn([installed_executable("reward_node"), "--ros-args"] + params)
        listen = Listener(ros_node)
        spin_until(ros_node, lambda r=reason: any(
            s.name.endswith(": model") and r in s.message
            for a in listen.diagnostics for s in a.status),
            what=f"diagnostics naming the bad parameter ({reason})", processes=[node])
        assert node.interrupt() == 0, node.output()
        assert reason in node.output()


def test_a_second_node_with_the_same_name_refuses_to_start_and_the_first_says_so(ros_node, spawn):
    """Before: neither warned, /reward interleaved two episodes and one set_task changed both."""
    first = spawn(reward_node_argv("instruction:=stack the cups"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    spin_until(ros_node, lambda: listen.states, what="the first node's task state", processes=[first])
    second = spawn(reward_node_argv("instruction:=open the drawer", "name_check_sec:=3.0"),
                   env=SCRIPTED_ENV)  # the default wait for discovery (0 in the other tests)
    # Refused at configure when its twin was heard within name_check_sec, else deactivated.
    stopped = ("configure failed: RuntimeError: another node named /reward_node (process",
               "deactivated: another node of the same name ran first")
    spin_until(ros_node, lambda: any(s in second.output() for s in stopped)
               and "started in this ROS domain after this one" in first.output(), timeout=60.0,
               what="the second node's refusal and the first node's warning", processes=[first, second])
    assert "already runs in ROS domain" in second.output() and "-r __node:=NAME" in second.output()
    assert second.interrupt() == 0 and first.interrupt() == 0, second.output()


def test_a_flood_of_task_calls_is_answered_in_full_served_or_refused_as_busy(ros_node, spawn):
    """Before: at 100 calls/s on each of the two services, a third of the calls were never answered."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from robo_reward_msgs.msg import StageSpec, TaskSpec
    from robo_reward_msgs.srv import SetTask, StartEpisode
    node = spawn(reward_node_argv("instruction:=stack the cups"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    deep = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)  # no loss on this side
    start = ros_node.create_client(StartEpisode, "/reward_node/start_episode", qos_profile=deep)
    set_task = ros_node.create_client(SetTask, "/reward_node/set_task", qos_profile=deep)
    spin_until(ros_node, lambda: start.service_is_ready() and set_task.service_is_ready(),
               what="the task services", processes=[node])
    futures, began = [], time.monotonic()
    for i in range(400):  # 100 calls/s on each service for 4 s
        while time.monotonic() < began + i / 100.0:
            ros_node.test_executor.spin_once(timeout_sec=0.002)
        futures.append(start.call_async(StartEpisode.Request(episode_id=f"flood-{i}")))
        task = TaskSpec(stages=[StageSpec(instruction=f"stack {i} cups")])
        futures.append(set_task.call_async(SetTask.Request(task=task, start_episode=True)))
    spin_until(ros_node, lambda: all(f.done() for f in futures), timeout=30.0,
               what=f"an answer to each of {len(futures)} calls", processes=[node])
    answers = [f.result() for f in futures]
    served = [a for a in answers if a.success]
    busy = [a for a in answers if not a.success]
    assert served and busy and all(a.message.startswith("busy: ") for a in busy)
    spin_until(ros_node, lambda: int(listen.diagnostic(": task", "service_calls_refused_busy") or 0)
               == len(busy), what="the refusals counted in diagnostics", processes=[node])
    assert int(listen.diagnostic(": task", "service_calls_served")) >= len(served)
    assert node.interrupt() == 0, node.output()


def test_a_params_file_that_cannot_be_read_is_one_line_and_exit_code_2(spawn, tmp_path):
    """Before: a Python traceback (RCLError from rclpy.init) for each of these."""
    files = {"missing.yaml": None, "not_yaml.yaml": "reward_node: [unclosed\n",
             "null.yaml": "reward_node: null\n"}
    for name, text in files.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        node = spawn([installed_executable("reward_node"), "--ros-args", "--params-file", str(path)])
        assert node.popen.wait(timeout=60) == 2, node.output()
        output = node.output()
        assert "Traceback" not in output, output
        lines = [line for line in output.splitlines() if line.startswith("cannot start:")]
        assert len(lines) == 1 and f"'--params-file {path}'" in lines[0], output
        assert "/project/src" not in lines[0]


def test_a_warning_then_a_terminal_failure_are_both_published_and_end_the_episode(ros_node,
                                                                                  spawn):
    """Found by the 30-minute soak: the first terminal failure after a warning was lost."""
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  "failure.stall_window_sec:=0.5",
                                  "failure.low_progress_grace_sec:=1.5",
                                  "failure.terminal_kinds:=low_progress"), env=SCRIPTED_ENV)
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    listen.wait_until_heard(ros_node, node)  # the stall warning comes once, early
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.05)),
                    lambda: listen.resets, "the terminal failure's reset request", node)
    kinds = [(f.kind, f.terminal) for f in listen.failures]
    assert (FailureEvent.KIND_STALL, False) in kinds
    assert kinds[-1] == (FailureEvent.KIND_LOW_PROGRESS, True)
    spin_until(ros_node, lambda: listen.states[-1].status == TaskState.STATUS_FAILED,
               what="the failed task state", processes=[node])
    assert node.interrupt() == 0, node.output()
    assert "callback failed" not in node.output()
