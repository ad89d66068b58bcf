# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Monitor thresholds that belong to the model: monitor_defaults.yaml, precedence, calibrate, the node applying it.

A checkpoint directory carries its recommended success.* and failure.* values; the node applies
them to the parameters the user has not set, and ``robo-reward calibrate`` chooses them from
labelled episodes by replaying the monitor over estimates scored once.
"""
import json
import os
import shutil

import pytest

from robo_reward_ros.models.loading import presets
from robo_reward_ros.settings import monitor_defaults as md
from robo_reward_ros.settings.parameter_table import SPECS

DEFAULTS = {spec.name: spec.default for spec in SPECS}


def _values(model_dir="", **changes):
    return {**DEFAULTS, "model.preset": "none", "model.id": model_dir, "model.backend": "robometer",
            **changes}


def _write(folder, text):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, md.FILE_NAME)
    with open(path, "w") as handle:
        handle.write(text)
    return path


# --- the file ------------------------------------------------------------------------------------
def test_a_file_is_read_typed_and_in_the_parameter_order(tmp_path):
    path = _write(str(tmp_path), "failure.stall_window_sec: 6\nsuccess.n: 5\nsuccess.threshold: 0.8\n")
    assert list(md.read_file(path).items()) == [
        ("success.threshold", 0.8), ("success.n", 5), ("failure.stall_window_sec", 6.0)]
    assert isinstance(md.read_file(path)["failure.stall_window_sec"], float)  # ROS types it as a double
    assert md.read_file(_write(str(tmp_path / "empty"), "# nothing recommended\n")) == {}


@pytest.mark.parametrize("text, says", [
    ("succes.threshold: 0.8\n", "did you mean success.threshold?"),
    ("timeout.episode_sec: 30\n", "'timeout.episode_sec' is not a model monitor parameter"),
    ("success.threshold: 1.5\n", "success.threshold must be in [0, 1], got 1.5"),
    ("success.threshold: 0\n", "success.threshold must be in (0, 1]"),  # the monitor's own check
    ("success.k: 2.5\n", "success.k must be an integer, got 2.5"),
    ("success.k: true\n", "success.k must be an integer, got True"),
    ("failure.stall_window_sec: soon\n", "failure.stall_window_sec must be a number"),
    ("success.k: 4\nsuccess.n: 3\n", "success.k must be in [1, success.n]"),
    ("- success.threshold\n", "expected a mapping of parameter names to values, got list"),
    ("success.threshold: [0.5\n", "not YAML"),
])
def test_a_bad_file_is_refused_naming_the_file_and_the_value(tmp_path, text, says):
    path = _write(str(tmp_path), text)
    with pytest.raises(md.MonitorDefaultsError) as raised:
        md.read_file(path)
    assert str(raised.value).startswith(path) and says in str(raised.value), str(raised.value)


def test_write_file_checks_then_writes_what_read_file_reads(tmp_path):
    path = md.write_file(str(tmp_path), {"success.n": 4, "success.threshold": 0.7}, ["made by a test"])
    assert path == os.path.join(str(tmp_path), md.FILE_NAME)
    assert open(path).read().startswith("# made by a test\n")
    assert md.read_file(path) == {"success.threshold": 0.7, "success.n": 4}
    with pytest.raises(md.MonitorDefaultsError):
        md.write_file(str(tmp_path), {"success.k": 0})
    assert md.read_file(path) == {"success.threshold": 0.7, "success.n": 4}  # the good file stays


# --- precedence ----------------------------------------------------------------------------------
def test_user_beats_model_file_beats_built_in(tmp_path):
    path = _write(str(tmp_path), "success.threshold: 0.8\nsuccess.n: 5\nsuccess.k: 4\n")
    values = _values(str(tmp_path), **{"success.k": 3})
    explicit = md.explicit_names({"success.k": 3, "success.threshold": 0.65})  # 0.65: the default
    assert explicit == {"success.k"}
    resolution = md.resolve(values, explicit)
    assert (resolution.values["success.threshold"], resolution.values["success.k"],
            resolution.values["success.n"]) == (0.8, 3, 5)
    assert resolution.sources["success.threshold"] == f"model file {path}"
    assert resolution.sources["success.k"] == md.USER
    assert resolution.sources["failure.stall_window_sec"] == md.BUILT_IN
    assert resolution.error == ""
    assert resolution.describe().startswith(f"user override: success.k=3; model file {path}: "
                                            "success.threshold=0.8, success.n=5; built-in default: ")
    # Set at run time: the user's, whatever the value.
    assert md.explicit_names({}, {"success.threshold"}) == {"success.threshold"}
    assert md.resolve(values, {"success.threshold", "success.k"}).values["success.threshold"] == 0.65


def test_a_previous_checkpoints_values_do_not_linger(tmp_path):
    """The node's parameters hold the last checkpoint's values; a checkpoint without a file gets the built-in ones."""
    values = _values(str(tmp_path), **{"success.threshold": 0.8, "success.n": 5})
    resolution = md.resolve(values, set())
    assert (resolution.values["success.threshold"], resolution.values["success.n"]) == (0.65, 3)
    assert set(resolution.sources.values()) == {md.BUILT_IN}


def test_a_bad_file_or_a_clash_leaves_the_built_in_defaults_and_says_why(tmp_path):
    path = _write(str(tmp_path / "bad"), "success.threshold: 2\n")
    resolution = md.resolve(_values(str(tmp_path / "bad")), set())
    assert resolution.values["success.threshold"] == 0.65
    assert path in resolution.error and "using the built-in defaults" in resolution.error
    _write(str(tmp_path / "clash"), "success.n: 2\nsuccess.k: 2\n")
    resolution = md.resolve(_values(str(tmp_path / "clash"), **{"success.k": 3, "success.n": 3}), {"success.k"})
    assert "does not go with the values set explicitly" in resolution.error
    assert (resolution.values["success.k"], resolution.values["success.n"]) == (3, 3)
    assert resolution.sources["success.n"] == md.BUILT_IN


def test_model_monitor_defaults_false_turns_the_file_off(tmp_path):
    _write(str(tmp_path), "success.threshold: 0.8\n")
    resolution = md.resolve(_values(str(tmp_path), **{md.SWITCH: False}), set())
    assert resolution.values["success.threshold"] == 0.65 and resolution.error == ""


def test_a_presets_values_apply_to_its_own_checkpoint_only(monkeypatch, tmp_path):
    preset = presets.ModelPreset("roboreward", "teetone/RoboReward-4B", "bf16", "a test preset",
                                 monitor=(("success.progress_threshold", 0.75),))
    monkeypatch.setitem(presets.PRESETS, "test-preset", preset)
    values = {**DEFAULTS, "model.preset": "test-preset"}
    resolution = md.resolve(values, set())
    assert resolution.values["success.progress_threshold"] == 0.75
    assert resolution.sources["success.progress_threshold"] == "preset test-preset"
    # model.id names another checkpoint: the preset's values are not its values.
    other = md.resolve({**values, "model.id": str(tmp_path)}, set())
    assert other.values["success.progress_threshold"] == 0.9
    # That checkpoint's own file counts.
    _write(str(tmp_path), "success.progress_threshold: 0.6\n")
    assert md.resolve({**values, "model.id": str(tmp_path)}, set()).values["success.progress_threshold"] == 0.6


def test_every_shipped_preset_passes_the_checks():
    for name, preset in presets.PRESETS.items():
        md.check_values(dict(preset.monitor), f"preset {name}")


def test_the_offline_replay_applies_the_file_as_the_node_does(tmp_path):
    from robo_reward_ros.replay.offline_replay import offline_parameter_values
    _write(str(tmp_path), "success.threshold: 0.8\nfailure.stall_window_sec: 6\n")
    lines = []
    values, _ = offline_parameter_values(str(tmp_path), "robometer", params=["failure.stall_window_sec=9"],
                                         log=lines.append)
    assert (values["success.threshold"], values["failure.stall_window_sec"]) == (0.8, 9.0)
    assert any(line.startswith("monitor settings: user override: failure.stall_window_sec=9.0; model file")
               for line in lines), lines


# --- calibrate -----------------------------------------------------------------------------------
def _episode(name, outcome, plateau, frames=24, period=0.5):
    """One-stage episode: progress climbs (a failure's drops back), the success probability to ``plateau``."""
    stamps = [round(i * period, 3) for i in range(frames)]
    climb = [min(1.0, i / (frames / 2)) for i in range(frames)]
    progress = climb if outcome == "success" else [c if i < frames / 2 else 0.2 for i, c in enumerate(climb)]
    success = [plateau * min(1.0, i / (frames / 2)) for i in range(frames)]
    estimates = [{"episode": name, "stamp": t, "stage": 0, "progress": p, "success_prob": s, "reward": 0.0,
                  "stage_succeeded": False, "frame_stamps": [t], "frame_progress": [p], "frame_success": [s],
                  "latency_s": 0.0, "camera": "camera/image_raw"}
                 for t, p, s in zip(stamps, progress, success)]
    summary = {"name": name, "task": "reach", "instructions": ["reach the goal"], "outcome": outcome,
               "stamps": stamps, "source": "test"}
    return summary, estimates


def _replay_folder(folder, episodes):
    """Write a replay folder (what robo-reward replay writes and eval reads) of constructed episodes."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "episodes.json"), "w") as handle:
        json.dump({"episodes": [s for s, _ in episodes], "model_description": "constructed estimates"}, handle)
    with open(os.path.join(folder, "estimates.jsonl"), "w") as handle:
        handle.writelines(json.dumps(e) + "\n" for _, rows in episodes for e in rows)
    open(os.path.join(folder, "events.jsonl"), "w").close()
    return folder


def test_calibrate_picks_the_one_threshold_between_successes_and_failures_and_writes_it(tmp_path, capsys):
    """Successes level off at a success probability of 0.72, failures at 0.68: only 0.70 of the grid parts them.

    The built-in 0.65 calls every failure a success.
    """
    from robo_reward_ros.cli.main import main
    episodes = ([_episode(f"good{i}", "success", 0.72 + 0.002 * i) for i in range(6)]
                + [_episode(f"bad{i}", "failure", 0.68 - 0.002 * i) for i in range(6)])
    replay = _replay_folder(str(tmp_path / "replay"), episodes)
    checkpoint = str(tmp_path / "checkpoint")
    os.makedirs(checkpoint)
    assert main(["calibrate", "--replay", replay, "--model", checkpoint, "--test-fraction", "0.34",
                 "--work", str(tmp_path / "work"), "--quiet"]) == 0
    out = capsys.readouterr().out
    print(out)
    written = md.read_file(os.path.join(checkpoint, md.FILE_NAME))
    assert written["success.threshold"] == 0.7
    # Every k-of-n parts them too: the middle of the equals, 2 of 3.
    assert (written["success.k"], written["success.n"]) == (2, 3)
    report = json.load(open(tmp_path / "work" / "calibration.json"))
    assert len(report["validation_episodes"]) == 8 and len(report["test_episodes"]) == 4
    test = report["figures"]["test"]
    assert test["chosen"]["success_detection"]["f1"] == 1.0
    assert test["built_in"]["success_detection"]["fp"] == 2  # the held-out failures, called successes
    assert "success.threshold=0.7" in out and "calibrate: wrote " + os.path.join(checkpoint, md.FILE_NAME) in out
    header = open(os.path.join(checkpoint, md.FILE_NAME)).read()
    assert "# test F1 success/failure detection: chosen 1.00/" in header
    # The node (and the offline replay) apply it to a checkpoint loaded from there.
    assert md.resolve(_values(checkpoint), set()).values["success.threshold"] == 0.7


def test_calibrate_leaves_out_what_it_cannot_use(tmp_path):
    from robo_reward_ros.evaluation.calibration import labelled_episodes
    summary, estimates = _episode("two", "success", 0.8)
    multi = {**summary, "instructions": ["open", "close"]}
    cut, cut_estimates = _episode("cut", "success", 0.8)
    data = {"episodes": [multi, {**_episode("none", "success", 0.8)[0], "outcome": None}, cut],
            "estimates": {"two": estimates, "cut": cut_estimates},
            "events": {"cut": [{"type": "episode_ended", "status": "succeeded", "stamp": 3.0}]}}
    kept, skipped = labelled_episodes(data)
    assert kept == []
    assert [s.split(":")[0] for s in skipped] == ["two", "none", "cut"]
    assert "only one-stage episodes" in skipped[0] and "later estimates are missing" in skipped[2]


# --- the node ------------------------------------------------------------------------------------
def test_the_node_applies_its_checkpoints_file_keeps_the_users_values_and_follows_a_new_checkpoint(
        ros_node, spawn, tiny_robometer_dir, tmp_path):
    """Start-up -p and ros2 param set values stay; each configure reads the loaded checkpoint's file."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    from rcl_interfaces.srv import GetParameters, SetParameters
    from rclpy.parameter import Parameter
    from ros_fixtures import installed_executable, spin_until
    from test_reward_node import call

    first, second, broken = (str(tmp_path / name) for name in ("first", "second", "broken"))
    for folder in (first, second, broken):
        shutil.copytree(tiny_robometer_dir, folder)
    first_file = md.write_file(first, {"success.threshold": 0.8, "success.k": 4, "success.n": 5,
                                       "failure.stall_window_sec": 7.5})
    md.write_file(second, {"success.threshold": 0.55, "success.n": 4, "failure.stall_window_sec": 6.0})
    broken_file = _write(broken, "success.threshold: 7\n")
    node = spawn([installed_executable("reward_node"), "--ros-args", "-p", "autostart:=false",
                  "-p", 'model.preset:=""', "-p", f"model.id:={first}", "-p", "model.backend:=robometer",
                  "-p", "model.precision:=fp32", "-p", "model.device:=cpu", "-p", 'episode_log.directory:=""',
                  "-p", "name_check_sec:=0.0", "-p", "success.k:=3",
                  "-p", "success.threshold:=0.65"])  # the built-in value: as if from the installed params file
    processes = [node]
    diagnostics = []
    ros_node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 10)
    change = ros_node.create_client(ChangeState, "/reward_node/change_state")
    get = ros_node.create_client(GetParameters, "/reward_node/get_parameters")
    set_ = ros_node.create_client(SetParameters, "/reward_node/set_parameters")
    names = ["success.threshold", "success.k", "success.n", "failure.stall_window_sec"]

    def transition(transition_id):
        assert call(ros_node, change, ChangeState.Request(transition=Transition(id=transition_id)),
                    processes).success, node.output()

    def parameters():
        reply = call(ros_node, get, GetParameters.Request(names=names), processes)
        return [_value(p) for p in reply.values]

    def model_status():
        for array in reversed(diagnostics):
            for status in array.status:
                if status.name.endswith(": model"):
                    return status
        return None

    def configured():
        transition(Transition.TRANSITION_CONFIGURE)
        diagnostics.clear()
        spin_until(ros_node, lambda: model_status() is not None and model_status().message != "not loaded "
                   "(node not configured)", what="the model status after configure", processes=processes)
        return model_status(), {kv.key: kv.value for kv in model_status().values}

    status, values = configured()
    assert parameters() == [0.8, 3, 5, 7.5]
    assert values["monitor_settings"].startswith(f"user override: success.k=3; model file {first_file}: "
                                                 "success.threshold=0.8, success.n=5, failure.stall_window_sec=7.5; ")
    assert f"monitor settings: user override: success.k=3; model file {first_file}: success.threshold=0.8" \
        in node.output()
    # Set at run time: the user's from now on, kept through a checkpoint change.
    request = SetParameters.Request(parameters=[Parameter("failure.stall_window_sec", value=12.0).to_parameter_msg()])
    assert call(ros_node, set_, request, processes).results[0].successful

    def load(checkpoint):
        transition(Transition.TRANSITION_CLEANUP)
        request = SetParameters.Request(parameters=[Parameter("model.id", value=checkpoint).to_parameter_msg()])
        assert call(ros_node, set_, request, processes).results[0].successful
        return configured()

    status, values = load(second)
    assert parameters() == [0.55, 3, 4, 12.0]
    assert "user override: success.k=3, failure.stall_window_sec=12.0" in values["monitor_settings"]
    status, values = load(broken)  # a bad file: built-in values, said, and the node runs
    assert parameters() == [0.65, 3, 3, 12.0]
    assert status.level == DiagnosticStatus.WARN and broken_file in values["monitor_defaults_error"]
    assert f"model monitor settings: {broken_file}: success.threshold must be in [0, 1], got 7" in node.output()
    transition(Transition.TRANSITION_ACTIVATE)
    assert node.interrupt() == 0, node.output()


def _value(msg):
    from rcl_interfaces.msg import ParameterType
    return {ParameterType.PARAMETER_DOUBLE: msg.double_value,
            ParameterType.PARAMETER_INTEGER: msg.integer_value}[msg.type]
