# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The node's parameter values checked together into settings: what the node and the offline replay run with."""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Dict, Optional, Sequence, Tuple

from robo_reward_ros.core.reward_pipeline import ModelErrorPolicy, WindowConfig
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.models.loading.choices import check_device, check_precision
from robo_reward_ros.models.loading.presets import resolve_preset
from robo_reward_ros.models.remote.wire import check_server_url
from robo_reward_ros.settings.parameter_table import NO_PRESET


@dataclasses.dataclass(frozen=True)
class ModelSettings:
    backend: str
    model_id: str
    precision: str
    device: str
    plugin_modules: Tuple[str, ...]
    options: Tuple[Tuple[str, str], ...] = ()  # extra keyword arguments for the backend


@dataclasses.dataclass(frozen=True)
class NodeSettings:
    model: ModelSettings
    verifier: Optional[ModelSettings]  # the second opinion's model, None without one
    camera_topics: Tuple[str, ...]
    qos_reliability: str
    qos_depth: int
    max_pixels: int
    max_stamp_jump_sec: float
    new_timeline_frames: int
    instruction_topic: str
    task_topic: str
    instruction: str
    max_stages: int
    window: WindowConfig
    rate_hz: float
    errors: Tuple[int, float, float]
    monitor: MonitorConfig
    reset_service: str
    reset_timeout_sec: float
    reset_retries: int
    diagnostics_period_sec: float

    def error_policy(self) -> ModelErrorPolicy:
        return ModelErrorPolicy(*self.errors)


def _split(text: str) -> Tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def model_settings(values: Dict[str, Any]) -> ModelSettings:
    preset_name = str(values["model.preset"]).strip()
    # "none" as well as empty: a launch argument cannot be empty (ros2 launch refuses NAME:="").
    preset = resolve_preset(preset_name) if preset_name not in ("", NO_PRESET) else None
    backend = values["model.backend"] or (preset.backend if preset else "auto")
    model_id = values["model.id"] or (preset.model_id if preset else "")
    precision = values["model.precision"] or (preset.precision if preset else "bf16")
    if not model_id and preset is not None and not preset.model_id:
        raise ValueError(f"model.preset {preset_name}: {preset.note}")
    if not model_id and backend in ("auto", "robometer", "roboreward", "topreward", "remote"):
        raise ValueError("no model: set model.preset, or model.id (a model id or directory)")
    if backend == "remote":
        try:
            model_id = check_server_url(model_id)
        except ValueError as exc:
            raise ValueError(f"model.id: {exc}") from None
    try:
        check_precision(precision)
        check_device(str(values["model.device"]))
    except ValueError as exc:
        raise ValueError(f"model.{str(exc)}") from None
    onnx = str(values["model.vision_onnx"]).strip()
    options = (("vision_runtime", "onnx"), ("vision_onnx", os.path.expanduser(onnx))) if onnx else ()
    return ModelSettings(backend, os.path.expanduser(model_id), precision,
                         str(values["model.device"]), _split(values["model.plugin_modules"]),
                         options)


# MonitorConfig field -> the node parameter that sets it (errors name what the user typed).
MONITOR_PARAMETERS = {
    "success_threshold": "success.threshold",
    "progress_success_threshold": "success.progress_threshold",
    "success_k": "success.k",
    "success_n": "success.n",
    "camera_rule": "success.camera_rule",
    "regression_margin": "failure.regression_margin",
    "regression_hold_s": "failure.regression_hold_sec",
    "stall_min_delta": "failure.stall_min_delta",
    "stall_window_s": "failure.stall_window_sec",
    "low_progress_floor": "failure.low_progress_floor",
    "low_progress_grace_s": "failure.low_progress_grace_sec",
    "sustain_estimates": "failure.sustain_estimates",
    "terminal_failures": "failure.terminal_kinds",
    "episode_timeout_s": "timeout.episode_sec",
    "stage_timeout_s": "timeout.stage_sec",
    "camera_stale_after_s": "cameras.stale_after_sec",
    "reward_mode": "reward.mode",
    "gamma": "reward.gamma",
    "success_bonus": "reward.success_bonus",
    "failure_bonus": "reward.failure_bonus",
    "timeout_bonus": "reward.timeout_bonus",
    "confirm_decisions": "operator.confirm_decisions",
    "confirm_timeout_s": "operator.confirm_timeout_sec",
    "confirm_timeout_action": "operator.confirm_timeout_action",
    "verdict_conflict_s": "operator.verdict_conflict_sec",
    "start_after_reset_done": "operator.start_after_reset_done",
    "verifier_threshold": "success.verifier.threshold",
    "verify_failures": "success.verifier.check_failures",
}
_MONITOR_NAME = re.compile(r"\b(" + "|".join(sorted(MONITOR_PARAMETERS, key=len, reverse=True)) + r")\b")


def monitor_config(values: Dict[str, Any], cameras: Sequence[str]) -> MonitorConfig:
    """Raise ValueError naming the node parameter when a combination is invalid (e.g. k > n)."""
    directory = str(values["episode_log.directory"]).strip()
    fields = {field: values[name] for field, name in MONITOR_PARAMETERS.items()}
    fields["terminal_failures"] = frozenset(_split(fields["terminal_failures"]))
    fields["episode_timeout_s"] = fields["episode_timeout_s"] or None
    fields["stage_timeout_s"] = fields["stage_timeout_s"] or None
    verifier = bool(str(values["success.verifier.backend"]).strip())
    fields["verify_failures"] = verifier and bool(fields["verify_failures"])
    band = (values["success.verifier.band_low"], values["success.verifier.band_high"])
    if band[0] > band[1]:
        raise ValueError(f"success.verifier.band_low ({band[0]}) exceeds success.verifier.band_high ({band[1]})")
    try:
        return MonitorConfig(
            cameras=tuple(cameras), **fields, verify_successes=verifier, verifier_band=band,
            log_directory=os.path.expanduser(directory) if directory else None,
            # The node and the replay see camera outages through the frame intake's clock.
            gaps_are_outages=False)
    except ValueError as exc:
        raise ValueError(_MONITOR_NAME.sub(lambda m: MONITOR_PARAMETERS[m.group(1)], str(exc))) from None


def camera_name(topic: str) -> str:
    """Return the name estimates and events use for a camera: its topic without the transport suffix."""
    return topic[:-len("/compressed")] if topic.endswith("/compressed") else topic


def verifier_settings(values: Dict[str, Any], model: ModelSettings) -> Optional[ModelSettings]:
    """Return the second opinion's model (``success.verifier.*``), or None without one."""
    backend = str(values["success.verifier.backend"]).strip()
    if not backend:
        return None
    if backend == "remote":
        raise ValueError("success.verifier.backend: a remote verifier is not supported; load it here")
    model_id = str(values["success.verifier.id"]).strip()
    if not model_id and backend in ("auto", "robometer", "roboreward", "topreward"):
        raise ValueError(f"success.verifier.id: the {backend} verifier needs a model id or directory")
    precision = str(values["success.verifier.precision"]).strip() or model.precision
    device = str(values["success.verifier.device"]).strip() or model.device
    try:
        check_precision(precision)
        check_device(device)
    except ValueError as exc:
        raise ValueError(f"success.verifier.{str(exc)}") from None
    return ModelSettings(backend, os.path.expanduser(model_id), precision, device, model.plugin_modules)


def read_settings(values: Dict[str, Any]) -> NodeSettings:
    """Validate all parameter values together; ValueError says which one is wrong and why."""
    topics = tuple(str(t) for t in values["cameras.topics"] if str(t).strip())
    if not topics:
        raise ValueError("cameras.topics must name at least one camera topic")
    names = [camera_name(t) for t in topics]
    if len(set(names)) != len(names):
        raise ValueError(f"cameras.topics names a camera twice: {list(topics)}")
    reliability = str(values["cameras.qos.reliability"])
    if reliability not in ("best_effort", "reliable"):
        raise ValueError(f"cameras.qos.reliability must be best_effort or reliable, "
                         f"got '{reliability}'")
    window = WindowConfig(values["window.max_frames"], values["window.min_interval_sec"],
                          values["window.max_age_sec"], values["window.min_frames"])
    if window.min_frames > window.max_frames:
        raise ValueError(f"window.min_frames ({window.min_frames}) exceeds window.max_frames "
                         f"({window.max_frames}): no camera would ever be scored")
    errors = (values["inference.error_report_after"], values["inference.error_backoff_sec"],
              values["inference.error_backoff_max_sec"])
    if errors[2] < errors[1]:
        raise ValueError("inference.error_backoff_max_sec must be >= inference.error_backoff_sec")
    model = model_settings(values)
    return NodeSettings(
        model=model, verifier=verifier_settings(values, model), camera_topics=topics,
        qos_reliability=reliability,
        qos_depth=values["cameras.qos.depth"], max_pixels=values["cameras.max_pixels"],
        max_stamp_jump_sec=values["cameras.max_stamp_jump_sec"],
        new_timeline_frames=values["cameras.new_timeline_frames"],
        instruction_topic=values["instruction_topic"],
        task_topic=values["task_topic"], instruction=values["instruction"],
        max_stages=values["task.max_stages"], window=window,
        rate_hz=values["inference.rate_hz"], errors=errors,
        monitor=monitor_config(values, names), reset_service=values["reset.service"],
        reset_timeout_sec=values["reset.timeout_sec"], reset_retries=values["reset.retries"],
        diagnostics_period_sec=values["diagnostics_period_sec"])
