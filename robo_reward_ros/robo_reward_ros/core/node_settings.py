"""Every parameter of the reward node in one table, and their validation into settings.

The table holds name, default, meaning, range, and whether it can change while the node runs.
ROS-free, so the offline replay reads the same table and decides with the node's defaults. The node
declares the parameters from here (node/parameters.py), config/reward.yaml lists them (a test keeps
the two equal), and the README table states the same facts.

Read-only parameters need a reload (a different model, other topics): change them in the YAML
file and restart, or cleanup + configure the lifecycle node. The monitor's thresholds can change
at run time; they are validated at once and take effect at the next episode start, so one
episode is never judged by two sets of rules.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Dict, Optional, Sequence, Tuple


from robo_reward_ros.core.reward_pipeline import ModelErrorPolicy, WindowConfig
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.models.loading.choices import check_device, check_precision
from robo_reward_ros.models.loading.presets import PRESETS, resolve_preset
from robo_reward_ros.serving.wire import check_server_url


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    name: str
    default: Any
    description: str
    read_only: bool = True
    low: Optional[float] = None
    high: Optional[float] = None


_BIG = 1e9
# Each step's dense reward lies in [-1, 1] in every mode, an episode's return in delta mode too
# (progress is in [0, 1]): a terminal bonus of 100 already drowns the shaping. Anything larger
# is a typo, or a peer on the ROS graph trying to wreck training through set_parameters.
_BONUS = 100.0
NO_PRESET = "none"

SPECS: Tuple[ParamSpec, ...] = (
    ParamSpec("autostart", True,
              "configure and activate at start-up, without an external lifecycle manager"),
    # Model (loaded in configure).
    ParamSpec("model.preset", "robometer-4b-nf4",
              f"named model set-up ({', '.join(PRESETS)}); none or empty: use model.id and "
              "model.backend"),
    ParamSpec("model.id", "",
              "model id or local checkpoint directory (http://HOST:PORT of a robo-reward serve "
              "server with model.backend remote); overrides the preset's"),
    ParamSpec("model.backend", "",
              "robometer, roboreward, topreward, auto, remote (a shared reward server), or a "
              "registered plugin backend; overrides the preset's"),
    ParamSpec("model.precision", "",
              "fp32, bf16, fp16, nf4, int8 (bitsandbytes), int8wo or int4wo (torchao); empty: "
              "the preset's (bf16 without a preset)"),
    ParamSpec("model.device", "auto", "auto, cuda, cuda:N or cpu"),
    ParamSpec("model.vision_onnx", "",
              "ONNX vision encoder (.onnx file or export directory from robo-reward export-onnx) "
              "run with ONNX Runtime (TensorRT, CUDA or CPU); empty: torch"),
    ParamSpec("model.plugin_modules", "",
              "comma-separated Python modules to import first; they may register backends"),
    # Inputs.
    ParamSpec("cameras.topics", ["camera/image_raw"],
              "camera topics; sensor_msgs/Image, or sensor_msgs/CompressedImage (jpeg/png) for "
              "topics ending in /compressed (the image_transport convention)"),
    ParamSpec("cameras.qos.reliability", "best_effort",
              "best_effort (sensor data, the default) or reliable; must be compatible with the "
              "camera driver's publisher, a mismatch is logged and in /diagnostics"),
    ParamSpec("cameras.qos.depth", 1, "subscription queue depth (keep last N)", low=1, high=100),
    ParamSpec("cameras.max_pixels", 50176,
              "frames larger than this many pixels are downscaled (aspect kept) on arrival; "
              "bounds memory and model input (50176 = 224 x 224)", low=1024, high=16777216),
    ParamSpec("cameras.max_stamp_jump_sec", 5.0,
              "a frame stamped this much after the previous one (or any earlier) is refused",
              low=0.01, high=3600.0),
    ParamSpec("cameras.new_timeline_frames", 10,
              "consecutive frames on a new timeline (a looping bag, a restarted camera clock) "
              "after which it is adopted and the episode restarts on it", low=1, high=10000),
    ParamSpec("cameras.stale_after_sec", 2.0,
              "a camera silent this long is reported stale (not a task failure)",
              read_only=False, low=0.05, high=3600.0),
    ParamSpec("instruction_topic", "instruction",
              "std_msgs/String: instruction of a one-stage task (latched)"),
    ParamSpec("task_topic", "task", "robo_reward_msgs/TaskSpec: a multi-stage task (latched)"),
    ParamSpec("instruction", "", "instruction to start with; empty: wait for a task"),
    ParamSpec("task.max_stages", 64,
              "a task with more stages is refused (each stage is in every log header and state)",
              low=1, high=1000),
    # Window and inference.
    ParamSpec("window.max_frames", 32, "frames kept per camera and stage (memory bound)",
              low=2, high=1024),
    ParamSpec("window.min_interval_sec", 0.1,
              "decimation: at most one kept frame per this many seconds (the newest always in)",
              low=0.0, high=60.0),
    ParamSpec("window.max_age_sec", 0.0,
              "0: the window covers the whole stage; > 0: only the last this many seconds",
              low=0.0, high=3600.0),
    ParamSpec("window.min_frames", 1, "frames a camera needs before it is scored",
              low=1, high=1024),
    ParamSpec("inference.rate_hz", 2.0,
              "reward steps per second (latest window wins; slower models lower the rate)",
              low=0.01, high=100.0),
    ParamSpec("inference.error_report_after", 3,
              "consecutive model failures before a model-error event", low=1, high=1000),
    ParamSpec("inference.error_backoff_sec", 0.5,
              "wait after a failure, doubled per consecutive failure", low=0.0, high=60.0),
    ParamSpec("inference.error_backoff_max_sec", 10.0, "longest wait between retries",
              low=0.0, high=600.0),
    # Success (runtime-changeable; applied at the next episode).
    ParamSpec("success.threshold", 0.65, "success probability needed for a success vote",
              read_only=False, low=0.0, high=1.0),
    ParamSpec("success.progress_threshold", 0.9,
              "progress needed for a vote when the backend has no success head",
              read_only=False, low=0.0, high=1.0),
    ParamSpec("success.k", 2, "votes needed among the last success.n estimates",
              read_only=False, low=1, high=100),
    ParamSpec("success.n", 3, "estimates the votes are counted over", read_only=False,
              low=1, high=100),
    ParamSpec("success.camera_rule", "majority", "combine cameras: any, majority or all",
              read_only=False),
    # Failures.
    ParamSpec("failure.regression_margin", 0.25, "progress drop below the best that counts",
              read_only=False, low=0.0, high=1.0),
    ParamSpec("failure.regression_hold_sec", 1.0, "how long the drop must last",
              read_only=False, low=0.0, high=3600.0),
    ParamSpec("failure.stall_min_delta", 0.05, "progress gain that counts as improvement",
              read_only=False, low=0.0, high=1.0),
    ParamSpec("failure.stall_window_sec", 15.0, "no improvement for this long is a stall",
              read_only=False, low=0.0, high=3600.0),
    ParamSpec("failure.low_progress_floor", 0.15, "progress under this after the grace is low",
              read_only=False, low=0.0, high=1.0),
    ParamSpec("failure.low_progress_grace_sec", 10.0, "time allowed before low progress counts",
              read_only=False, low=0.0, high=3600.0),
    ParamSpec("failure.sustain_estimates", 2,
              "estimates a progress level must hold before it counts as reached",
              read_only=False, low=1, high=100),
    ParamSpec("failure.terminal_kinds", "",
              "comma-separated failure kinds that end the episode (regression, stall, "
              "low_progress); empty: failures only warn", read_only=False),
    ParamSpec("timeout.episode_sec", 120.0, "episode time limit; 0: none (a task may set its own)",
              read_only=False, low=0.0, high=_BIG),
    ParamSpec("timeout.stage_sec", 0.0, "default stage time limit; 0: none",
              read_only=False, low=0.0, high=_BIG),
    # Reward.
    ParamSpec("reward.mode", "delta", "dense reward: delta (default; a return independent of the "
              "step rate), potential or progress",
              read_only=False),
    ParamSpec("reward.gamma", 0.99, "discount of potential-based shaping", read_only=False,
              low=0.0, high=1.0),
    ParamSpec("reward.success_bonus", 1.0, "added when the episode succeeds", read_only=False,
              low=-_BONUS, high=_BONUS),
    ParamSpec("reward.failure_bonus", -1.0, "added when a terminal failure ends the episode",
              read_only=False, low=-_BONUS, high=_BONUS),
    ParamSpec("reward.timeout_bonus", 0.0, "added when a time limit ends the episode",
              read_only=False, low=-_BONUS, high=_BONUS),
    # Episodes and reset.
    ParamSpec("episode_log.directory", "~/.ros/robo_reward/episodes",
              "per-episode JSON Lines logs; empty: no log"),
    ParamSpec("reset.service", "",
              "std_srvs/Trigger service of the robot controller to call when an episode ends; "
              "empty: only the reset_request topic"),
    ParamSpec("reset.timeout_sec", 2.0, "wait per reset call", low=0.01, high=600.0),
    ParamSpec("reset.retries", 3, "extra attempts after a failed or unanswered call",
              low=0, high=100),
    ParamSpec("diagnostics_period_sec", 1.0, "period of the /diagnostics report",
              low=0.05, high=60.0),
    ParamSpec("services.max_changes_per_sec", 10.0,
              "set_task and start_episode calls taken per second (bursts of twice that); more "
              "are answered at once as busy, changing nothing", low=0.1, high=1000.0),
    ParamSpec("name_check_sec", 3.0,
              "at configure, give discovery until this long after start-up (the model loads "
              "meanwhile) to bring another node of the same name, then refuse to run if one was "
              "started first (one heard later deactivates this node); 0: no wait",
              low=0.0, high=60.0),
)


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
}
_MONITOR_NAME = re.compile(r"\b(" + "|".join(sorted(MONITOR_PARAMETERS, key=len, reverse=True)) + r")\b")


def monitor_config(values: Dict[str, Any], cameras: Sequence[str]) -> MonitorConfig:
    """Raise ValueError naming the node parameter when a combination is invalid (e.g. k > n)."""
    directory = str(values["episode_log.directory"]).strip()
    fields = {field: values[name] for field, name in MONITOR_PARAMETERS.items()}
    fields["terminal_failures"] = frozenset(_split(fields["terminal_failures"]))
    fields["episode_timeout_s"] = fields["episode_timeout_s"] or None
    fields["stage_timeout_s"] = fields["stage_timeout_s"] or None
    try:
        return MonitorConfig(
            cameras=tuple(cameras), **fields,
            log_directory=os.path.expanduser(directory) if directory else None,
            # The node and the replay see camera outages through the frame intake's clock.
            gaps_are_outages=False)
    except ValueError as exc:
        raise ValueError(_MONITOR_NAME.sub(lambda m: MONITOR_PARAMETERS[m.group(1)], str(exc))) from None


def camera_name(topic: str) -> str:
    """Return the name estimates and events use for a camera: its topic without the transport suffix."""
    return topic[:-len("/compressed")] if topic.endswith("/compressed") else topic


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
    return NodeSettings(
        model=model_settings(values), camera_topics=topics, qos_reliability=reliability,
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
