# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Parameter validation: one clear refusal per bad value or combination, before any model loads."""
import pytest

from robo_reward_ros.settings.parameter_table import SPECS
from robo_reward_ros.settings.node_settings import camera_name, read_settings


def values(**changes):
    result = {spec.name: spec.default for spec in SPECS}
    result.update({name.replace("__", "."): value for name, value in changes.items()})
    return result


def test_defaults_select_the_jetson_preset():
    settings = read_settings(values())
    assert (settings.model.backend, settings.model.model_id, settings.model.precision) == (
        "robometer", "robometer/Robometer-4B", "nf4")
    assert settings.camera_topics == ("camera/image_raw",)
    assert settings.monitor.success_threshold == 0.65 and settings.monitor.cameras == (
        "camera/image_raw",)


def test_explicit_values_override_the_preset_and_onnx_becomes_a_backend_option():
    settings = read_settings(values(model__preset="roboreward-4b", model__precision="nf4",
                                    model__vision_onnx="/models/vision.onnx"))
    assert (settings.model.backend, settings.model.precision) == ("roboreward", "nf4")
    assert dict(settings.model.options) == {"vision_runtime": "onnx",
                                            "vision_onnx": "/models/vision.onnx"}


def test_the_trustroboreward_slot_runs_a_local_copy_as_roboreward():
    settings = read_settings(values(model__preset="trustroboreward-4b", model__id="/models/trust"))
    assert (settings.model.backend, settings.model.model_id, settings.model.precision) == (
        "roboreward", "/models/trust", "bf16")


def test_a_verifier_defaults_to_the_models_precision_and_device_and_turns_the_checks_on():
    settings = read_settings(values(success__verifier__backend="topreward", success__verifier__id="/m",
                                    success__verifier__check_failures=True))
    assert (settings.verifier.backend, settings.verifier.precision, settings.verifier.device) == (
        "topreward", "nf4", "auto")
    assert settings.monitor.verify_successes and settings.monitor.verify_failures
    assert settings.monitor.verifier_band == (0.5, 0.8)
    plain = read_settings(values(success__verifier__check_failures=True))
    assert plain.verifier is None and not plain.monitor.verify_successes and not plain.monitor.verify_failures


def test_compressed_topics_name_their_camera_without_the_transport():
    assert camera_name("wrist/image_raw/compressed") == "wrist/image_raw"
    settings = read_settings(values(cameras__topics=["front/image_raw",
                                                     "wrist/image_raw/compressed"]))
    assert settings.monitor.cameras == ("front/image_raw", "wrist/image_raw")


@pytest.mark.parametrize("changes, message", [
    (dict(model__preset="robometer-9000"), "unknown model preset 'robometer-9000'"),
    (dict(model__preset=""), "no model: set model.preset, or model.id"),
    (dict(model__preset="trustroboreward-4b"),
     "model.preset trustroboreward-4b: TrustRoboReward-4B: weights not published yet"),
    (dict(success__verifier__backend="topreward"),
     "success.verifier.id: the topreward verifier needs a model id or directory"),
    (dict(success__verifier__backend="remote", success__verifier__id="http://x:8000"),
     "a remote verifier is not supported"),
    (dict(success__verifier__backend="topreward", success__verifier__id="/m", success__verifier__precision="fp8"),
     "success.verifier.precision"),
    (dict(success__verifier__band_low=0.9, success__verifier__band_high=0.5),
     "success.verifier.band_low (0.9) exceeds success.verifier.band_high (0.5)"),
    (dict(cameras__topics=[""]), "cameras.topics must name at least one camera topic"),
    (dict(cameras__topics=["a/image_raw", "a/image_raw/compressed"]), "names a camera twice"),
    (dict(cameras__qos__reliability="sometimes"), "cameras.qos.reliability must be"),
    (dict(window__min_frames=40), "window.min_frames (40) exceeds window.max_frames (32)"),
    (dict(success__k=4), "success.k must be in [1, success.n]"),
    (dict(success__camera_rule="most"), "success.camera_rule must be one of"),
    (dict(reward__mode="sparse"), "reward.mode must be one of"),
    (dict(failure__terminal_kinds="regression,camera_stale"), "cannot be terminal"),
    (dict(failure__terminal_kinds="wobble"), "unknown failure kind 'wobble'"),
    (dict(inference__error_backoff_sec=5.0, inference__error_backoff_max_sec=1.0),
     "error_backoff_max_sec must be >="),
])
def test_bad_values_are_refused_with_the_reason(changes, message):
    with pytest.raises(ValueError) as error:
        read_settings(values(**changes))
    assert message in str(error.value)


def test_every_reward_number_has_a_range_that_keeps_the_bonus_sane():
    """A terminal bonus of 1e9 drowns every shaped reward; before, the range was +-1e9 (accepted)."""
    from robo_reward_ros.node.parameters import descriptor
    numbers = [s for s in SPECS if s.name.startswith("reward.") and isinstance(s.default, (int, float))]
    assert {s.name for s in numbers} >= {"reward.gamma", "reward.success_bonus", "reward.failure_bonus",
                                         "reward.timeout_bonus"}
    for spec in numbers:
        (limits,) = descriptor(spec).floating_point_range
        assert limits.from_value <= spec.default <= limits.to_value, spec.name
        assert -100.0 <= limits.from_value and limits.to_value <= 100.0, (spec.name, limits)
