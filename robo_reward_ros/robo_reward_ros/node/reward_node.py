# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward node: a managed (lifecycle) ROS shell around the reward pipeline.

configure: validate parameters, load the model (slow, once). activate: subscribe, publish,
serve, start the inference thread. deactivate: stop scoring, keep the model. cleanup: free the
model (and accelerator memory). With ``autostart`` (default) it configures and activates itself,
so a plain start of the executable works without a lifecycle manager.

Threads: the executor has a few threads. The lifecycle services have their own (reentrant)
callback group, so ``get_state`` and /diagnostics answer while a configure loads the model, and a
shutdown abandons the load at once; the load runs in a daemon thread the exit does not wait for.
Everything else the executor runs (frames, tasks, services, timers, parameters) is in the default,
mutually exclusive group; transitions hold the node's state lock for the part that changes state,
and so do those callbacks, so the two never interleave. The inference thread runs the model and
publishes what comes out; the reset requester calls the controller. The model never runs under
the state lock.
"""
from __future__ import annotations

import functools
import gc
import os
import sys
import threading
import time
from typing import List, Optional, Tuple

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNodeMixin, State, TransitionCallbackReturn
from rclpy.node import Node
from rclpy.parameter import Parameter
from robo_reward_msgs.msg import FailureEvent, OperatorLabel, ResetRequest, RewardEstimate, RewardStep
from robo_reward_msgs.msg import TaskSpec as TaskSpecMsg
from robo_reward_msgs.msg import TaskState
from robo_reward_msgs.srv import ComparePreference, QueryProgress, SetTask, StartEpisode
from std_msgs.msg import String

from robo_reward_ros.core.abandonable_call import CallAbandoned, call_abandonable
from robo_reward_ros.core.best_effort_log import check_log_directory, free_bytes
from robo_reward_ros.core.call_budget import CallBudget
from robo_reward_ros.core.episode_ids import InvalidEpisodeIdError
from robo_reward_ros.core.events import DecisionPending, EpisodeEnded, FailureDetected, VerifierChecked
from robo_reward_ros.core.frame_intake import FrameIntake, IntakeResult
from robo_reward_ros.core.log_text import escape_controls
from robo_reward_ros.core.monitor_update import MonitorUpdate
from robo_reward_ros.core.periodic_worker import PeriodicWorker
from robo_reward_ros.core.reward_pipeline import RewardPipeline
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.verifier import Verifier
from robo_reward_ros.core.task_spec import (InvalidTaskError, TaskSpec, build_task,
                                            check_task_for_model, describe_task)
from robo_reward_ros.models.loading.backend_registry import import_plugins
from robo_reward_ros.models.loading.loader import load_reward_model
from robo_reward_ros.models.loading.verifier_loading import MemoryReport, load_verifier
from robo_reward_ros.node import diagnostics as diag
from robo_reward_ros.node.camera_subscriptions import CameraSubscriptions, camera_qos
from robo_reward_ros.node.messages import estimate_msg, failure_msg, reset_msg, state_msg, step_msg
from robo_reward_ros.node.name_collision import TwinWatch, wait_for_twin
from robo_reward_ros.node.operator_services import OperatorServices
from robo_reward_ros.node.parameters import current_values, declare_parameters
from robo_reward_ros.node.preference_service import PreferenceService
from robo_reward_ros.node.progress_query_service import ProgressQueryService
from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_QOS, SERVICE_QOS
from robo_reward_ros.node.reset_client import ResetRequester
from robo_reward_ros.node.ros_compat import on_parameters_set
from robo_reward_ros.node.runner import run_node
from robo_reward_ros.node.task_conversions import task_from_msg
from robo_reward_ros.settings.node_settings import (NodeSettings, camera_name, monitor_config,
                                                    read_settings)
from robo_reward_ros.settings.monitor_defaults import MODEL_PARAMETERS, explicit_names, resolve
from robo_reward_ros.settings.parameter_table import SPECS

AT_CONFIGURE = frozenset(spec.name for spec in SPECS if spec.at_configure)  # set while unconfigured
TICK_PERIOD_SEC = 0.2  # time limits and stale cameras are checked this often
EXECUTOR_THREADS = 5  # a transition, get_state, the default group, query and preference at once


def holding_state_lock(method):
    """Run a transition's or callback's body under the node's state lock (see the module docstring)."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._state_lock:
            return method(self, *args, **kwargs)
    return locked


class RewardNode(LifecycleNodeMixin, Node):
    """A LifecycleNode, built from its two bases here: LifecycleNode does not pass a callback group on."""

    def __init__(self, **kwargs) -> None:
        self._state_lock = threading.RLock()
        self._created_at = time.monotonic()
        self._call_budget: Optional[CallBudget] = None
        lifecycle_group = self._lifecycle_group = ReentrantCallbackGroup()
        Node.__init__(self, "reward_node", **kwargs)
        LifecycleNodeMixin.__init__(self, callback_group=lifecycle_group)
        self._refused_parameters = declare_parameters(self)
        on_parameters_set(self, self._validate_parameters, self._apply_parameters)
        self._settings: Optional[NodeSettings] = None
        self._model = None
        self._verifier = None  # the second opinion's model (success.verifier.*), or None
        self._memory_report: Optional[MemoryReport] = None
        self._pipeline: Optional[RewardPipeline] = None
        self._intake: Optional[FrameIntake] = None
        self._cameras: Optional[CameraSubscriptions] = None
        self._worker: Optional[PeriodicWorker] = None
        self._reset: Optional[ResetRequester] = None
        self._latency = diag.LatencyWindow()
        self._rates = diag.InputRates()
        self._model_lock = threading.Lock()  # the model is not re-entrant: scoring vs preference
        self._active_handles: List = []
        # The newest problem per area, for the log (once per change) and /diagnostics.
        self._last_errors = {"model": "", "task": "", "reset": "", "episode_log": "", "operator": ""}
        self._configure_error = ""
        # Model parameters set at run time (explicit: a checkpoint's monitor_defaults.yaml never
        # replaces them); where each model parameter's value came from at the last configure.
        self._set_at_run_time: set = set()
        self._applying_model_defaults = False
        self._monitor_settings = ""
        self._monitor_defaults_error = ""
        self._loading: Optional[Tuple[str, float]] = None  # (what, monotonic start) during a load
        self._stop_requested = threading.Event()
        self._state_pub = self.create_lifecycle_publisher(TaskState, "task_state", LATCHED_QOS)
        self._estimate_pub = self.create_lifecycle_publisher(RewardEstimate, "reward", EVENTS_QOS)
        # One message per inference step, fused over the cameras: what an RL controller reads.
        self._step_pub = self.create_lifecycle_publisher(RewardStep, "reward_step", EVENTS_QOS)
        self._failure_pub = self.create_lifecycle_publisher(FailureEvent, "failure_events",
                                                            EVENTS_QOS)
        self._reset_pub = self.create_lifecycle_publisher(ResetRequest, "reset_request",
                                                          EVENTS_QOS)
        # Every operator input as recorded (applied, late or refused), for consoles and bags.
        self._label_pub = self.create_lifecycle_publisher(OperatorLabel, "operator_labels",
                                                          EVENTS_QOS)
        # Diagnostics run in every state: a node that failed to configure must say why. Health
        # timers run on a steady clock: with use_sim_time, a paused or absent /clock must not
        # silence /diagnostics, stale-camera detection or time limits.
        self._steady_clock = Clock(clock_type=ClockType.STEADY_TIME)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._diag_timer = self.create_timer(
            float(self.get_parameter("diagnostics_period_sec").value), self._publish_diagnostics,
            clock=self._steady_clock)
        # In every state, from the start: a twin may be heard while the model loads.
        self._twins = TwinWatch(self, self._stop_as_younger_twin,
                                lambda text: self._report_error("task", text))
        self._autostart_timer = None
        if self.get_parameter("autostart").value:
            # On the executor (lifecycle group), not here: the executor must already be spinning
            # while the model loads, so get_state, /diagnostics and a shutdown are served.
            self._autostart_timer = self.create_timer(0.0, self._autostart,
                                                      callback_group=lifecycle_group)

    def _stop_as_younger_twin(self, reason: str) -> None:
        """Another node of this name ran first: configure refuses (wait_for_twin); an active one stops.

        Checked on a timer until no transition is under way (one may be: the activation).
        """
        self._report_error("task", reason)

        def deactivate_when_settled() -> None:
            label = self._state_machine.current_state[1]
            if label in ("configuring", "activating", "deactivating", "cleaningup"):
                return
            self.destroy_timer(timer)
            if label == "active":
                self._configure_error = "deactivated: another node of the same name ran first"
                self.get_logger().error(self._configure_error)
                self.trigger_deactivate()

        timer = self.create_timer(0.1, deactivate_when_settled, callback_group=self._lifecycle_group,
                                  clock=self._steady_clock)

    def request_stop(self) -> None:
        """Abandon a model load: the process is stopping (the runner calls this first)."""
        self._stop_requested.set()

    def _autostart(self) -> None:
        with self._state_lock:
            if self._autostart_timer is None:  # the timer fired again before its cancel
                return
            self.destroy_timer(self._autostart_timer)
            self._autostart_timer = None
        if self.trigger_configure() == TransitionCallbackReturn.SUCCESS:
            self.trigger_activate()

    # --- lifecycle ------------------------------------------------------------------------------
    def on_configure(self, state: State) -> TransitionCallbackReturn:
        try:
            if self._refused_parameters:
                raise ValueError("; ".join(self._refused_parameters))
            self._apply_model_monitor_settings()
            settings = read_settings(current_values(self))
            import_plugins(settings.model.plugin_modules)
            started = time.monotonic()
            model = self._load_model(settings)
            twin = wait_for_twin(self._twins, self._created_at,
                                 float(self.get_parameter("name_check_sec").value))
            if twin:
                model.close()
                raise RuntimeError(twin)
            needed = model.max_frames
            if needed and settings.window.max_frames < needed:
                model.close()
                raise ValueError(
                    f"window.max_frames ({settings.window.max_frames}) is smaller than the "
                    f"{needed} frames {model.name} scores per query")
            verifier = self._load_verifier(settings, model)
        except CallAbandoned:
            self._configure_error = "configure abandoned: the node is shutting down"
            self.get_logger().warning(f"{self._configure_error} while the model loads")
            return TransitionCallbackReturn.FAILURE
        except Exception as exc:  # bad parameters, missing weights, out of memory: say which
            self._configure_error = f"configure failed: {type(exc).__name__}: {exc}"
            self.get_logger().error(self._configure_error)
            return TransitionCallbackReturn.FAILURE
        self._install(settings, model, verifier)
        self.get_logger().info(
            f"model {settings.model.model_id or settings.model.backend} "
            f"({model.name}, {settings.model.precision}, device {_device_of(model, settings)}) "
            f"loaded in {time.monotonic() - started:.1f} s")
        if verifier is not None:
            self.get_logger().info(
                f"verifier {settings.verifier.model_id or settings.verifier.backend} ({verifier.name}, "
                f"{settings.verifier.precision}) loaded: asked about successes in "
                f"[{settings.monitor.verifier_band[0]:g}, {settings.monitor.verifier_band[1]:g}]"
                f"{' and terminal failures' if settings.monitor.verify_failures else ''}; memory: "
                f"{self._memory_report.describe()}")
        self._check_episode_log_directory(settings.monitor.log_directory)
        return super().on_configure(state)

    def _apply_model_monitor_settings(self) -> None:
        """Give the model parameters the user has not set the model's recommended values (settings/monitor_defaults.py).

        They are set as parameters, so ``ros2 param get`` shows the values in force, and logged
        with where each came from. A bad file is reported and the built-in defaults are used.
        """
        given = {name: p.value for name, p in (getattr(self, "_parameter_overrides", {}) or {}).items()}
        resolution = resolve(current_values(self), explicit_names(given, self._set_at_run_time))
        changed = [Parameter(name, value=resolution.values[name]) for name in MODEL_PARAMETERS
                   if self.get_parameter(name).value != resolution.values[name]]
        if changed:
            with self._state_lock:  # a user's change meanwhile waits, and then counts as the user's
                self._applying_model_defaults = True
                try:
                    result = self.set_parameters_atomically(changed)
                finally:
                    self._applying_model_defaults = False
            if not result.successful:
                raise ValueError(f"the model's monitor settings: {result.reason}")
        self._monitor_defaults_error = resolution.error
        if resolution.error:
            self.get_logger().error(escape_controls(f"model monitor settings: {resolution.error}"))
        self._monitor_settings = resolution.describe()
        self.get_logger().info(escape_controls(f"monitor settings: {self._monitor_settings}"))

    def _load_model(self, settings: NodeSettings):
        """Load in a daemon thread; waits for it unless the process stops first (CallAbandoned)."""
        model = settings.model
        what = model.model_id or model.backend
        source = ("local directory" if os.path.isdir(model.model_id) else
                  "a reward server" if model.backend == "remote" else
                  "the Hugging Face hub or its cache" if model.model_id else "plugin backend")
        device = ("auto (the first CUDA device if there is one, else the CPU)"
                  if model.device == "auto" else model.device)
        self.get_logger().info(
            f"loading model {what} (backend {model.backend}, precision {model.precision}, device "
            f"{device}) from {source}; /diagnostics reports it until it is loaded")
        self._loading = (what, time.monotonic())
        try:
            return call_abandonable(
                lambda: load_reward_model(model.model_id, model.backend, model.precision,
                                          model.device, **dict(model.options)),
                self._stop_requested, name="model-load")
        finally:
            self._loading = None

    def _load_verifier(self, settings: NodeSettings, model):
        """Load the second opinion's model if one is set, after checking both fit (the model is closed if not)."""
        spec = settings.verifier
        if spec is None:
            return None
        self.get_logger().info(f"loading verifier {spec.model_id or spec.backend} (backend {spec.backend}, "
                               f"precision {spec.precision}, device {spec.device})")
        try:
            verifier, self._memory_report = call_abandonable(
                lambda: load_verifier(spec, model, load_reward_model), self._stop_requested,
                name="verifier-load")
        except BaseException:
            model.close()
            raise
        return verifier

    @holding_state_lock
    def _install(self, settings: NodeSettings, model, verifier=None) -> None:
        self._configure_error = ""
        self._model = model
        self._verifier = verifier
        self._pipeline = RewardPipeline(model, TaskMonitor(settings.monitor),
                                        settings.monitor.cameras,
                                        settings.window, settings.error_policy(),
                                        verifier=Verifier(verifier) if verifier is not None else None)
        self._intake = FrameIntake(
            self._pipeline, settings.max_pixels, settings.max_stamp_jump_sec,
            settings.new_timeline_frames,
            topics={camera: topic for camera, topic in zip(settings.monitor.cameras,
                                                           settings.camera_topics)})
        if settings.reset_service:
            self._reset = ResetRequester(self, settings.reset_service, settings.reset_timeout_sec,
                                         settings.reset_retries, self._on_reset_outcome)
        self._settings = settings  # last: callbacks take a node with settings as configured

    def _check_episode_log_directory(self, directory: Optional[str]) -> None:
        """Say at once whether episodes will be logged; a bad directory never stops scoring."""
        self._last_errors["episode_log"] = ""
        if directory is None:
            self.get_logger().info("episode logs off (episode_log.directory is empty)")
            return
        problem = check_log_directory(directory)
        if problem:
            self._report_error("episode_log", f"{problem}; episodes are scored but not logged "
                                              "until it can be written")
            return
        free = free_bytes(directory)
        self.get_logger().info(f"episode logs in {directory}" + (
            f" ({free / 1e9:.1f} GB free)" if free is not None else ""))

    @holding_state_lock
    def on_activate(self, state: State) -> TransitionCallbackReturn:
        settings = self._settings
        rate = float(self.get_parameter("services.max_changes_per_sec").value)
        self._call_budget = CallBudget(rate, burst=max(1, int(2 * rate)))
        self._cameras = CameraSubscriptions(
            self, self._intake, camera_qos(settings.qos_reliability, settings.qos_depth),
            self._on_frame_result, lock=self._state_lock)
        preference = PreferenceService(self, self._model, self._model_lock,
                                       settings.model.model_id, settings.max_pixels)
        self._active_handles = [
            self.create_subscription(String, settings.instruction_topic, self._on_instruction,
                                     LATCHED_QOS),
            self.create_subscription(TaskSpecMsg, settings.task_topic, self._on_task, LATCHED_QOS),
            self.create_service(SetTask, "~/set_task", self._within_budget(self._handle_set_task),
                                qos_profile=SERVICE_QOS),
            self.create_service(StartEpisode, "~/start_episode",
                                self._within_budget(self._handle_start_episode),
                                qos_profile=SERVICE_QOS),
            # Its own callback group: while a comparison is awaited, frames, timers and the
            # other services go on (the default group would hold them until it returns).
            self.create_service(ComparePreference, "~/compare_preference", preference.handle,
                                callback_group=MutuallyExclusiveCallbackGroup()),
            self.create_service(QueryProgress, "~/query_progress",
                                ProgressQueryService(self._pipeline, self._model_lock).handle,
                                callback_group=MutuallyExclusiveCallbackGroup()),
            self.create_timer(TICK_PERIOD_SEC, self._tick, clock=self._steady_clock),
        ]
        operator_rate = float(self.get_parameter("operator.max_inputs_per_sec").value)
        self._active_handles += OperatorServices(
            self, self._pipeline, self._intake.frame_time, self._publish_update_then_state,
            self._label_pub, CallBudget(operator_rate, burst=max(1, int(2 * operator_rate)),
                                        what="operator inputs"),
            self._state_lock, self._report_error).create()
        result = super().on_activate(state)
        self._publish_state(self._pipeline.state)
        if self._pipeline.task is not None:
            # Re-activated: the task goes on in a new episode from the next frame (deactivate
            # ended the last one); scoring must not silently wait for start_episode.
            self._publish_then_state(self._pipeline.start_episode(None, None, "node activated"))
        elif settings.instruction.strip():
            try:
                self._set_task(build_task([settings.instruction]), True, "instruction parameter")
            except InvalidTaskError as exc:
                self._report_error("task", f"instruction parameter rejected: {exc}")
        # Start each on-time step on a frame that just arrived (waiting at most a quarter period,
        # 50 ms at most): latest-wins sampling otherwise scores a frame up to a camera period old.
        self._worker = PeriodicWorker(settings.rate_hz, self._inference_step,
                                      self._on_worker_error,
                                      align_to_input_sec=min(0.05, 0.25 / settings.rate_hz))
        self._worker.start()
        return result

    @holding_state_lock
    def on_deactivate(self, state: State) -> TransitionCallbackReturn:
        self._stop_active("node deactivated")
        return super().on_deactivate(state)

    @holding_state_lock
    def on_cleanup(self, state: State) -> TransitionCallbackReturn:
        self._release_model()
        return super().on_cleanup(state)

    @holding_state_lock
    def on_shutdown(self, state: State) -> TransitionCallbackReturn:
        self._stop_active("node shut down")
        self._release_model()
        return super().on_shutdown(state)

    @holding_state_lock
    def destroy_node(self) -> None:
        """On SIGINT/SIGTERM: join the inference thread, close the episode log and free the model before the node goes.

        A model step may be running in native code.
        """
        self._stop_active("node shutting down")
        self._release_model()
        super().destroy_node()

    def _stop_active(self, reason: str) -> None:
        if self._worker is not None:
            if not self._worker.stop(timeout=60.0):
                self.get_logger().warning("inference step still running after 60 s")
            self._worker = None
        if self._pipeline is not None:
            self._publish_update(self._pipeline.abort_episode(self._intake.frame_time(), reason))
        if self._cameras is not None:
            self._cameras.destroy()
            self._cameras = None
        for handle in self._active_handles:
            self._destroy_handle(handle)
        self._active_handles = []

    def _destroy_handle(self, handle) -> None:
        for destroy in (self.destroy_subscription, self.destroy_service, self.destroy_timer):
            try:
                if destroy(handle):
                    return
            except (TypeError, AttributeError):
                continue

    def _release_model(self) -> None:
        if self._reset is not None:
            self._reset.close()
            self._reset = None
        if self._pipeline is not None:
            self._pipeline.close()
            self._pipeline = None
            self._intake = None
        if self._model is not None:
            with self._model_lock:
                self._model.close()
                if self._verifier is not None:
                    self._verifier.close()
            self._model = self._verifier = None
            self._memory_report = None
            gc.collect()
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_available():
                torch.cuda.empty_cache()
        self._settings = None

    # --- inputs (executor thread) -----------------------------------------------------------
    def _on_frame_result(self, camera: str, result: IntakeResult) -> None:
        if result.new_timeline:
            self._report_error("task", f"camera {camera}: {result.new_timeline}")
            self._publish_then_state(result.updates)
        else:
            for update in result.updates:  # a waiting episode started with this frame
                self._publish_update(update)
        worker = self._worker
        if result.accepted and worker is not None:
            worker.notify()

    @holding_state_lock
    def _on_instruction(self, msg: String) -> None:
        try:
            self._set_task(build_task([msg.data]), True, "instruction topic")
        except InvalidTaskError as exc:
            self._report_error("task", f"instruction rejected: {exc}")

    @holding_state_lock
    def _on_task(self, msg: TaskSpecMsg) -> None:
        try:
            self._set_task(task_from_msg(msg), True, "task topic")
        except InvalidTaskError as exc:
            self._report_error("task", f"task rejected: {exc}")

    def _within_budget(self, handle):
        """Serve a task service call if the change budget allows, else answer "busy" at once."""
        def serve(request, response):
            if self._call_budget.take():
                return handle(request, response)
            response.success, response.message = False, self._call_budget.busy_reason()
            return response
        return serve

    @holding_state_lock
    def _handle_set_task(self, request, response):
        try:
            task = task_from_msg(request.task)
            self._set_task(task, request.start_episode, "set_task service")
        except (InvalidTaskError, InvalidEpisodeIdError) as exc:
            self._report_error("task", f"task rejected: {exc}")
            response.success, response.message = False, str(exc)
            return response
        except Exception as exc:  # every request gets an answer, whatever went wrong
            return self._internal_error(response, "set_task", exc)
        response.success = True
        response.message = f"task with {task.stage_count} stage(s) set"
        response.episode_id = self._pipeline.state.episode_id if request.start_episode else ""
        return response

    @holding_state_lock
    def _handle_start_episode(self, request, response):
        try:
            updates = self._pipeline.start_episode(
                self._intake.frame_time(), request.episode_id, request.reason.strip() or "reset")
            self._intake.expect_gap()
            self._publish_then_state(updates)
        except (RuntimeError, InvalidEpisodeIdError) as exc:
            response.success, response.message = False, str(exc)
            return response
        except Exception as exc:  # every request gets an answer, whatever went wrong
            return self._internal_error(response, "start_episode", exc)
        response.success, response.message = True, "episode started"
        response.episode_id = self._pipeline.state.episode_id
        return response

    def _internal_error(self, response, service: str, exc: Exception):
        text = f"{service} failed: {type(exc).__name__}: {exc}"
        self._report_error("task", text)
        response.success, response.message = False, text
        return response

    def _set_task(self, task: TaskSpec, start: bool, source: str) -> None:
        """Set the task; raise InvalidTaskError (the running task stays) for one this node and model must not run."""
        check_task_for_model(task, self._settings.max_stages, self._model.reserved_texts())
        self.get_logger().info(f"task from {source}: {describe_task(task)}")
        self._publish_then_state(self._pipeline.set_task(task, self._intake.frame_time(), start))
        if start:
            self._intake.expect_gap()

    # --- inference thread -------------------------------------------------------------------
    def _inference_step(self) -> None:
        with self._model_lock:
            report = self._pipeline.step()
        for result in report.results:
            self._latency.add(result.estimate.latency_s)
            if result.step is not None:
                self._estimate_pub.publish(estimate_msg(
                    result, self._settings.model.model_id, self._settings.model.precision,
                    self._intake.stats[result.camera].frame_id))
            self._publish_update(result.update)
        for update in report.updates:
            self._publish_update(update)
        if report.error:
            self._report_error("model", f"inference step failed: {report.error}")

    def _on_worker_error(self, exc: BaseException) -> None:
        self._report_error("model", f"inference thread: {type(exc).__name__}: {exc}")

    # --- outputs (any thread) ---------------------------------------------------------------
    def _publish_update(self, update: MonitorUpdate) -> None:
        if update.step is not None:  # before the events: the terminal step, then the reset request
            self._step_pub.publish(step_msg(update.step))
        if not update.events:
            return
        for event in update.events:
            if isinstance(event, VerifierChecked):
                what = "success" if event.success else "failure"
                said = (f"failed ({event.error}), the model's decision stands" if event.value is None else
                        f"{event.value:.2f} vs threshold {event.threshold:g}: "
                        f"{'confirmed' if event.confirmed else 'vetoed'}")
                self.get_logger().info(escape_controls(
                    f"episode {event.episode_id}: verifier {event.backend} on the model's {what} "
                    f"({event.model_value:.2f}, in the band): {said} ({event.latency_s * 1000:.0f} ms)"))
            elif isinstance(event, DecisionPending):
                self.get_logger().info(escape_controls(
                    f"episode {event.episode_id}: {'success' if event.success else 'failure'} "
                    f"pending an operator's confirmation ({event.reason})"))
            elif isinstance(event, FailureDetected):
                # One call site per severity: rclpy refuses a call site whose severity changes.
                text = escape_controls(f"{event.kind.name.lower()}: {event.description}")
                if event.terminal:
                    self.get_logger().error(text)
                else:
                    self.get_logger().warning(text)
                self._failure_pub.publish(failure_msg(event))
            elif isinstance(event, EpisodeEnded):
                self.get_logger().info(escape_controls(
                    f"episode {event.episode_id} ended: {event.status.name.lower()}, decided by "
                    f"{event.decider or event.decided_by.name.lower()} ({event.reason})"))
                if event.reset_requested:
                    self._reset_pub.publish(reset_msg(event))
                    if self._reset is not None:
                        self._reset.request(event.episode_id)
        self._publish_state(update.state)

    def _publish_update_then_state(self, update: MonitorUpdate) -> None:
        """Publish what an operator's input changed, then the state (a takeover changes only the state)."""
        self._publish_then_state([update])

    def _publish_then_state(self, updates) -> None:
        """Publish what a task or episode change produced, then where things stand now."""
        for update in updates:
            self._publish_update(update)
        self._publish_state(self._pipeline.state)

    def _publish_state(self, state) -> None:
        self._state_pub.publish(state_msg(state))

    def _on_reset_outcome(self, ok: bool, text: str) -> None:
        if ok:
            self.get_logger().info(escape_controls(text))
        else:
            self._report_error("reset", text)

    def _report_error(self, area: str, text: str) -> None:
        if text != self._last_errors[area]:
            self.get_logger().error(escape_controls(text))
        self._last_errors[area] = text

    # --- timers (executor thread) -----------------------------------------------------------
    @holding_state_lock
    def _tick(self) -> None:
        for update in self._intake.tick():
            self._publish_update(update)
        health = self._pipeline.monitor.log_health
        if health is not None:
            if health.error:
                self._report_error("episode_log", f"episode log: {health.error}")
            elif self._last_errors["episode_log"] and health.records_written:
                self.get_logger().info("episode log writing resumed")
                self._last_errors["episode_log"] = ""

    # --- parameters -------------------------------------------------------------------------
    @holding_state_lock
    def _validate_parameters(self, parameters) -> SetParametersResult:
        """Refuse a change that leaves the rules invalid.

        Read-only parameters are refused by rclpy itself: their descriptors say so. Also before
        configure (the parameter services answer while the model loads): configure reads them.
        """
        state = self._state_machine.current_state[1]
        for parameter in parameters:
            if parameter.name in AT_CONFIGURE and state != "unconfigured":
                return SetParametersResult(successful=False, reason=(
                    f"{parameter.name} is read at configure: deactivate and clean up the node "
                    f"first (it is {state}), then set it and configure"))
        try:
            self._monitor_config_with(parameters)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    @holding_state_lock
    def _apply_parameters(self, parameters) -> None:
        """After an accepted change: new rules for the next episode.

        The running one keeps the rules it started with. A model parameter set here is the
        user's (explicit) from now on, unless the node itself set it at configure.
        """
        if not self._applying_model_defaults:
            self._set_at_run_time.update(p.name for p in parameters if p.name in MODEL_PARAMETERS)
        if self._settings is None:
            return
        self._pipeline.use_monitor_next(TaskMonitor(self._monitor_config_with(parameters)))
        self.get_logger().info(f"parameters {sorted(p.name for p in parameters)} accepted; they "
                               "apply from the next episode")

    def _monitor_config_with(self, parameters):
        values = current_values(self)
        values.update({p.name: p.value for p in parameters})
        settings = self._settings
        cameras = settings.monitor.cameras if settings is not None else [
            camera_name(str(t)) for t in values["cameras.topics"] if str(t).strip()]
        return monitor_config(values, cameras)

    # --- diagnostics ------------------------------------------------------------------------
    @holding_state_lock
    def _publish_diagnostics(self) -> None:
        name = self.get_fully_qualified_name()  # two robots' nodes must not look the same
        array = DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        if self._model is None or self._settings is None:
            loading = self._loading
            array.status.append(diag.unloaded_model_status(
                name, self._configure_error,
                None if loading is None else (loading[0], time.monotonic() - loading[1])))
        else:
            array.status.append(diag.model_status(
                name, self._model, self._settings, self._latency, self._worker,
                self._pipeline.errors, self._last_errors["model"], self._monitor_settings,
                self._monitor_defaults_error, self._memory_report))
        if self._cameras is not None and self._intake is not None:
            array.status.extend(diag.camera_statuses(
                name, self._intake, self._rates.rates(self._intake.stats.values()),
                self._settings.monitor.camera_stale_after_s,
                {s.topic: self.count_publishers(s.topic) for s in self._intake.stats.values()}))
        if self._pipeline is not None:
            array.status.append(diag.task_status(name, self._pipeline.state,
                                                 self._last_errors["task"],
                                                 self._pipeline.monitor.log_path,
                                                 self._call_budget))
            array.status.append(diag.episode_log_status(
                name, self._pipeline.monitor.log_health, self._last_errors["episode_log"]))
        if self._reset is not None:
            array.status.append(diag.reset_status(name, self._reset))
        self._diag_pub.publish(array)


def _device_of(model, settings: NodeSettings) -> str:
    """Return the device the backend chose (``auto`` resolved), else the parameter's value."""
    return str(model.device or settings.model.device)


def main(args=None) -> int:
    # The node's log is one line per record: no carriage-return progress bars from model loading
    # (transformers reads this before it is imported).
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return run_node(RewardNode, args, threads=EXECUTOR_THREADS)


if __name__ == "__main__":
    sys.exit(main())
