# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Every parameter of the reward node in one table.

Name, default, meaning, range, and whether it can change while the node runs.

ROS-free, so the offline replay reads the same table and decides with the node's defaults. The node
declares the parameters from here (node/parameters.py), config/reward.yaml lists them (a test keeps
the two equal), and the README table states the same facts.

Read-only parameters need a restart (other topics): change them in the YAML file and restart.
The model's parameters (``at_configure``) can be set while the node is unconfigured and are read
at the next configure: a new checkpoint loads through the lifecycle, without a restart. The
monitor's thresholds can change at run time; they are validated at once and take effect at the
next episode start, so one episode is never judged by two sets of rules.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional, Tuple

from robo_reward_ros.models.loading.presets import PRESETS


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    name: str
    default: Any
    description: str
    read_only: bool = True
    low: Optional[float] = None
    high: Optional[float] = None
    # Settable only while the node is unconfigured, read at the next configure: the model, so a
    # new checkpoint loads through the lifecycle (deactivate, cleanup, set, configure, activate).
    at_configure: bool = False


_BIG = 1e9
_MODEL = {"read_only": False, "at_configure": True}  # the model: set while unconfigured
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
              "model.backend", **_MODEL),
    ParamSpec("model.id", "",
              "model id or local checkpoint directory (http://HOST:PORT of a robo-reward serve "
              "server with model.backend remote); overrides the preset's", **_MODEL),
    ParamSpec("model.backend", "",
              "robometer, roboreward, topreward, auto, remote (a shared reward server), or a "
              "registered plugin backend; overrides the preset's", **_MODEL),
    ParamSpec("model.precision", "",
              "fp32, bf16, fp16, nf4, int8 (bitsandbytes), int8wo or int4wo (torchao); empty: "
              "the preset's (bf16 without a preset)", **_MODEL),
    ParamSpec("model.device", "auto", "auto, cuda, cuda:N or cpu", **_MODEL),
    ParamSpec("model.vision_onnx", "",
              "ONNX vision encoder (.onnx file or export directory from robo-reward export-onnx) "
              "run with ONNX Runtime (TensorRT, CUDA or CPU); empty: torch", **_MODEL),
    ParamSpec("model.monitor_defaults", True,
              "apply the model's recommended success.* and failure.* settings (monitor_defaults.yaml "
              "in the checkpoint directory, or the preset's) to those not set explicitly; false: "
              "the built-in defaults", **_MODEL),
    ParamSpec("model.plugin_modules", "",
              "comma-separated Python modules to import first; they may register backends", **_MODEL),
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
    # A second opinion (docs/reward-engine.md): a verifier model, loaded at configure.
    ParamSpec("success.verifier.backend", "",
              "a second model asked only about decisions in success.verifier.band_*: roboreward, "
              "topreward, robometer or a plugin backend; empty: no verifier", **_MODEL),
    ParamSpec("success.verifier.id", "", "the verifier's model id or local checkpoint directory",
              **_MODEL),
    ParamSpec("success.verifier.precision", "", "the verifier's precision; empty: model.precision's",
              **_MODEL),
    ParamSpec("success.verifier.device", "", "the verifier's device; empty: the model's", **_MODEL),
    ParamSpec("success.verifier.band_low", 0.5,
              "a success whose deciding value (success probability, else progress) lies in "
              "[band_low, band_high] waits for the verifier", read_only=False, low=0.0, high=1.0),
    ParamSpec("success.verifier.band_high", 0.8, "upper end of that band", read_only=False,
              low=0.0, high=1.0),
    ParamSpec("success.verifier.threshold", 0.5,
              "the verifier's reading (TOPReward's P(True), a success head, else progress) that "
              "confirms a success (at or over it) or a failure (under it); else it vetoes",
              read_only=False, low=0.0, high=1.0),
    ParamSpec("success.verifier.check_failures", False,
              "terminal failures whose stage progress lies in the band wait for the verifier too",
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
    # The operator in the loop (docs/operator-loop.md).
    ParamSpec("operator.confirm_decisions", False,
              "a model success or terminal failure waits (TaskState STATUS_PENDING) for an "
              "operator's confirmation or veto, and pays no success meanwhile",
              read_only=False),
    ParamSpec("operator.confirm_timeout_sec", 30.0,
              "how long (frame time) a pending decision waits for an operator",
              read_only=False, low=0.01, high=_BIG),
    ParamSpec("operator.confirm_timeout_action", "apply",
              "after that wait: apply the model's decision, or drop it (the stage goes on)",
              read_only=False),
    ParamSpec("operator.verdict_conflict_sec", 1.0,
              "an opposite verdict from another source this soon after one is refused (the "
              "first wins)", read_only=False, low=0.0, high=3600.0),
    ParamSpec("operator.start_after_reset_done", False,
              "after a reset request, report_reset_done starts the next episode of the same task",
              read_only=False),
    ParamSpec("operator.max_inputs_per_sec", 20.0,
              "operator inputs (verdicts, takeovers, reset-done, dismissals) taken per second "
              "(bursts of twice that); more are answered at once as busy", low=0.1, high=1000.0),
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
