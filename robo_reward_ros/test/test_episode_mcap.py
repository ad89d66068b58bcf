# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``replay --mcap``: one MCAP per episode with the camera stream and the node's messages on the recording's timeline.

Read back with rosbags (as ``ros2 bag`` would) and with the plain ``mcap`` reader (as Foxglove
and PlotJuggler do: only the file, schemas inside).
"""
import json
import os

import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")

from robot_recordings import BASE_NS, ramp, write_recording  # noqa: E402

WRIST, SCENE = "/wrist/image_raw/compressed", "/scene/image_raw"
SCRIPTED = dict(model="scripted", backend="pixel_scripted", plots=False, progress_bar=False,
                params=["model.plugin_modules=scripted_backend", "inference.rate_hz=2",
                        "failure.stall_window_sec=2"])


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    from robo_reward_ros.recordings.robot_recording import RecordingOptions
    from robo_reward_ros.replay.replay_run import run_replay
    root = tmp_path_factory.mktemp("mcap")
    bag = write_recording(str(root / "robot"), {WRIST: "jpeg", SCENE: "bgr8"},
                          [("pick up the cup", ramp(40, 1.0, 30)), ("open the drawer", [(0.3, 0.05)] * 40)])
    out = str(root / "out")
    summary = run_replay([bag], out, mcap=True, **SCRIPTED, reading=RecordingOptions(
        camera_topics=(WRIST, SCENE), instruction_topic="/task", split_gap_sec=1.0))
    return bag, out, summary


def _messages(path):
    from rosbags.rosbag2 import Reader
    from robo_reward_ros.recordings.episode_mcap import typestore_with_messages
    store = typestore_with_messages()
    with Reader(path) as reader:
        return [(c.topic, t, raw, store.deserialize_cdr(raw, c.msgtype)) for c, t, raw in reader.messages()]


def test_each_episode_mcap_holds_the_camera_stream_and_the_nodes_messages_in_time_order(replayed):
    bag, out, summary = replayed
    assert [os.path.basename(p) for p in summary["mcap"]] == ["robot_e000", "robot_e001"]
    messages = _messages(summary["mcap"][1])
    times = [t for _, t, _, _ in messages]
    assert times == sorted(times)
    # Camera messages are the recording's, byte for byte, at their header stamps.
    from rosbags.rosbag2 import Reader
    with Reader(bag) as reader:
        recorded = {(c.topic, t): raw for c, t, raw in reader.messages() if c.topic in (WRIST, SCENE)}
    cameras = [(topic, t, raw) for topic, t, raw, _ in messages if topic in (WRIST, SCENE)]
    assert len(cameras) == 80 and all(recorded[(topic, t)] == raw for topic, t, raw in cameras)
    # One RewardEstimate per line of estimates.jsonl, same values, on the recording's clock.
    with open(os.path.join(out, "estimates.jsonl")) as handle:
        rows = [json.loads(line) for line in handle if json.loads(line)["episode"] == "robot_e001"]
    with open(os.path.join(out, "episodes.json")) as handle:
        origin = json.load(handle)["episodes"][1]["origin_ns"]
    rewards = [m for topic, _, _, m in messages if topic == "/reward"]
    assert [(m.camera, m.progress, m.stage_index) for m in rewards] == [
        (r["camera"], pytest.approx(r["progress"], abs=1e-6), r["stage"]) for r in rows]
    assert rewards[0].header.stamp.sec * 10**9 + rewards[0].header.stamp.nanosec == origin + int(
        round(rows[0]["stamp"] * 1e9))
    assert origin > BASE_NS and rewards[0].instruction == "open the drawer"
    # Task state at the start and at the end; the stall as a FailureEvent.
    states = [(m.status, m.stage_index) for topic, _, _, m in messages if topic == "/task_state"]
    assert states[0] == (1, 0) and states[-1] == (0, 0)
    failures = [m for topic, _, _, m in messages if topic == "/failure_events"]
    assert [(f.kind, f.episode_id) for f in failures] == [(2, "robot_e001")]


def test_the_mcap_opens_with_the_plain_mcap_reader(replayed):
    pytest.importorskip("mcap", reason="mcap is not installed")
    from mcap.reader import make_reader
    _, _, summary = replayed
    path = os.path.join(summary["mcap"][0], "robot_e000.mcap")
    with open(path, "rb") as handle:
        reader = make_reader(handle)
        schemas = {c.topic: reader.get_summary().schemas[c.schema_id].name
                   for c in reader.get_summary().channels.values()}
        counts = {}
        for _, channel, _ in reader.iter_messages(log_time_order=True):
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    assert schemas == {WRIST: "sensor_msgs/msg/CompressedImage", SCENE: "sensor_msgs/msg/Image",
                       "/reward": "robo_reward_msgs/msg/RewardEstimate",
                       "/task_state": "robo_reward_msgs/msg/TaskState",
                       "/failure_events": "robo_reward_msgs/msg/FailureEvent"}
    assert counts["/reward"] > 0 and counts["/task_state"] == 2


def test_replay_writes_a_foxglove_layout_for_its_cameras_and_its_panels_render(replayed, tmp_path):
    from robo_reward_ros.cli.render_layout import main
    from robo_reward_ros.visualisation.foxglove_layout import panels
    _, out, summary = replayed
    with open(summary["layout"]) as handle:
        layout = json.load(handle)
    kinds = [kind for kind, _ in panels(layout)]
    assert kinds == ["Image", "Image", "Plot", "Plot", "StateTransitions", "RawMessages"]
    assert [c["imageMode"]["imageTopic"] for kind, c in panels(layout) if kind == "Image"] == [WRIST, SCENE]
    png = str(tmp_path / "view.png")
    assert main([summary["mcap"][1], "--out", png]) == 0
    with open(png, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_the_shipped_layout_is_what_make_layout_builds_for_the_nodes_default_camera():
    from robo_reward_ros.visualisation.foxglove_layout import make_layout, panels
    config = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config", "foxglove")
    with open(os.path.join(config, "reward_node.json")) as handle:
        shipped = json.load(handle)
    assert shipped == make_layout(["/camera/image_raw"], ["camera/image_raw"], node="reward_node")
    # The operator's buttons call the node's own services with requests of their types.
    from robo_reward_msgs import srv
    from robo_reward_msgs.msg import OperatorVerdict
    buttons = [c for kind, c in panels(shipped) if kind == "CallService"]
    assert [c["buttonText"] for c in buttons] == ["Veto: not yet", "Success", "Failure", "Take over",
                                                  "Hand back", "Reset done"]
    types = {"submit_verdict": srv.SubmitVerdict, "set_intervention": srv.SetIntervention,
             "report_reset_done": srv.ReportResetDone}
    for button in buttons:
        node, service = button["serviceName"].rsplit("/", 1)
        payload = json.loads(button["requestPayload"])  # the generated types refuse unknown fields
        if "verdict" in payload:
            source = types[service].Request(verdict=OperatorVerdict(**payload["verdict"])).verdict.source
        else:
            source = types[service].Request(**payload).source
        assert node == "/reward_node" and source == "foxglove"
    assert [c["topicPath"] for kind, c in panels(shipped) if kind == "RawMessages"] == [
        "/failure_events", "/operator_labels"]
