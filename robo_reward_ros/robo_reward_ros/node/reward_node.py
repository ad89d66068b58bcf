"""The reward node: a managed (lifecycle) ROS shell around the reward pipeline.

configure: validate parameters, load the model (slow, once). activate: subscribe, publish,
serve, start the inference thread. deactivate: stop scoring, keep the model. cleanup: free the
model (and accelerator memory). With ``autostart`` (default) it configures and activates itself,
so a plain start of the executable works without a lifecycle manager.

Threads: the executor receives frames, tasks and service calls; the inference thread runs the
model and publishes what comes out; the reset requester calls the controller. Only the
pipeline's lock is shared, and the model never runs under it.
"""
from __future__ import annotations

import gc
import os
import sys
import threading
import time
from typing import List, Optional

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.lifecycle import Node as LifecycleNode
from rclpy.lifecycle import State, TransitionCallbackReturn
from robo_reward_msgs.msg import FailureEvent, ResetRequest, RewardEstimate
from robo_reward_msgs.msg import TaskSpec as TaskSpecMsg
from robo_reward_msgs.msg import TaskState
from robo_reward_msgs.srv import ComparePreference, SetTask, StartEpisode
from std_msgs.msg import String

from robo_reward_ros.core.events import EpisodeEnded, FailureDetected
from robo_reward_ros.core.frame_intake import FrameIntake, IntakeResult
from robo_reward_ros.core.node_settings import NodeSettings, monitor_config, read_settings
from robo_reward_ros.core.periodic_worker import PeriodicWorker
from robo_reward_ros.core.reward_pipeline import RewardPipeline
from robo_reward_ros.core.task_monitor import MonitorUpdate, TaskMonitor
from robo_reward_ros.core.task_spec import InvalidTaskError, TaskSpec, build_task
from robo_reward_ros.models.loading.backend_registry import create_reward_model, import_plugins
from robo_reward_ros.node import diagnostics as diag
from robo_reward_ros.node.camera_subscriptions import CameraSubscriptions, camera_qos
from robo_reward_ros.node.messages import estimate_msg, failure_msg, reset_msg, state_msg
from robo_reward_ros.node.parameters import current_values, declare_parameters
from robo_reward_ros.node.preference_service import PreferenceService
from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_QOS
from robo_reward_ros.node.reset_client import ResetRequester
from robo_reward_ros.node.ros_compat import on_parameters_set
from robo_reward_ros.node.runner import run_node
from robo_reward_ros.node.task_conversions import task_from_msg

TICK_PERIOD_SEC = 0.2  # time limits and stale cameras are checked this often


class RewardNode(LifecycleNode):
    def __init__(self, **kwargs) -> None:
        super().__init__("reward_node", **kwargs)
        self._refused_parameters = declare_parameters(self)
        on_parameters_set(self, self._validate_parameters, self._apply_parameters)
        self._settings: Optional[NodeSettings] = None
        self._model = None
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
        self._last_errors = {"model": "", "task": "", "reset": ""}
        self._configure_error = ""
        self._state_pub = self.create_lifecycle_publisher(TaskState, "task_state", LATCHED_QOS)
        self._estimate_pub = self.create_lifecycle_publisher(RewardEstimate, "reward", EVENTS_QOS)
        self._failure_pub = self.create_lifecycle_publisher(FailureEvent, "failure_events",
                                                            EVENTS_QOS)
        self._reset_pub = self.create_lifecycle_publisher(ResetRequest, "reset_request",
                                                          EVENTS_QOS)
        # Diagnostics run in every state: a node that failed to configure must say why.
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._diag_timer = self.create_timer(
            float(self.get_parameter("diagnostics_period_sec").value), self._publish_diagnostics)
        if self.get_parameter("autostart").value:
            if self.trigger_configure() == TransitionCallbackReturn.SUCCESS:
                self.trigger_activate()

    # --- lifecycle ------------------------------------------------------------------------------
    def on_configure(self, state: State) -> TransitionCallbackReturn:
        try:
            if self._refused_parameters:
                raise ValueError("; ".join(self._refused_parameters))
            settings = read_settings(current_values(self))
            import_plugins(settings.model.plugin_modules)
            started = time.monotonic()
            model = create_reward_model(settings.model.model_id, settings.model.backend,
                                        settings.model.precision, settings.model.device,
                                        **dict(settings.model.options))
            needed = getattr(model, "max_frames", None)
            if needed and settings.window.max_frames < needed:
                model.close()
                raise ValueError(
                    f"window.max_frames ({settings.window.max_frames}) is smaller than the "
                    f"{needed} frames {model.name} scores per query")
        except Exception as exc:  # bad parameters, missing weights, out of memory: say which
            self._configure_error = f"configure failed: {type(exc).__name__}: {exc}"
            self.get_logger().error(self._configure_error)
            return TransitionCallbackReturn.FAILURE
        self._configure_error = ""
        self._settings = settings
        self._model = model
        self._pipeline = RewardPipeline(model, TaskMonitor(settings.monitor),
                                        settings.monitor.cameras,
                                        settings.window, settings.error_policy())
        self._intake = FrameIntake(
            self._pipeline, settings.max_pixels, settings.max_stamp_jump_sec,
            settings.new_timeline_frames,
            topics={camera: topic for camera, topic in zip(settings.monitor.cameras,
                                                           settings.camera_topics)})
        if settings.reset_service:
            self._reset = ResetRequester(self, settings.reset_service, settings.reset_timeout_sec,
                                         settings.reset_retries, self._on_reset_outcome)
        self.get_logger().info(
            f"model {settings.model.model_id or settings.model.backend} "
            f"({model.name}, {settings.model.precision}, device {settings.model.device}) loaded "
            f"in {time.monotonic() - started:.1f} s")
        return super().on_configure(state)

    def on_activate(self, state: State) -> TransitionCallbackReturn:
        settings = self._settings
        self._cameras = CameraSubscriptions(
            self, self._intake, camera_qos(settings.qos_reliability, settings.qos_depth),
            self._on_frame_result)
        preference = PreferenceService(self, self._model, self._model_lock,
                                       settings.model.model_id, settings.max_pixels)
        self._active_handles = [
            self.create_subscription(String, settings.instruction_topic, self._on_instruction,
                                     LATCHED_QOS),
            self.create_subscription(TaskSpecMsg, settings.task_topic, self._on_task, LATCHED_QOS),
            self.create_service(SetTask, "~/set_task", self._handle_set_task),
            self.create_service(StartEpisode, "~/start_episode", self._handle_start_episode),
            # Its own callback group: while a comparison is awaited, frames, timers and the
            # other services go on (the default group would hold them until it returns).
            self.create_service(ComparePreference, "~/compare_preference", preference.handle,
                                callback_group=MutuallyExclusiveCallbackGroup()),
            self.create_timer(TICK_PERIOD_SEC, self._tick),
        ]
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

    def on_deactivate(self, state: State) -> TransitionCallbackReturn:
        self._stop_active("node deactivated")
        return super().on_deactivate(state)

    def on_cleanup(self, state: State) -> TransitionCallbackReturn:
        self._release_model()
        return super().on_cleanup(state)

    def on_shutdown(self, state: State) -> TransitionCallbackReturn:
        self._stop_active("node shut down")
        self._release_model()
        return super().on_shutdown(state)

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
            self._model = None
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

    def _on_instruction(self, msg: String) -> None:
        try:
            task = build_task([msg.data])
        except InvalidTaskError as exc:
            self._report_error("task", f"instruction rejected: {exc}")
            return
        self._set_task(task, True, "instruction topic")

    def _on_task(self, msg: TaskSpecMsg) -> None:
        try:
            task = task_from_msg(msg)
        except InvalidTaskError as exc:
            self._report_error("task", f"task rejected: {exc}")
            return
        self._set_task(task, True, "task topic")

    def _handle_set_task(self, request, response):
        try:
            task = task_from_msg(request.task)
        except InvalidTaskError as exc:
            self._report_error("task", f"task rejected: {exc}")
            response.success, response.message = False, str(exc)
            return response
        self._set_task(task, request.start_episode, "set_task service")
        response.success = True
        response.message = f"task with {task.stage_count} stage(s) set"
        response.episode_id = self._pipeline.state.episode_id if request.start_episode else ""
        return response

    def _handle_start_episode(self, request, response):
        try:
            updates = self._pipeline.start_episode(
                self._intake.frame_time(), request.episode_id.strip() or None,
                request.reason.strip() or "reset")
        except RuntimeError as exc:
            response.success, response.message = False, str(exc)
            return response
        self._publish_then_state(updates)
        response.success, response.message = True, "episode started"
        response.episode_id = self._pipeline.state.episode_id
        return response

    def _set_task(self, task: TaskSpec, start: bool, source: str) -> None:
        self.get_logger().info(
            f"task from {source}: " + " | ".join(s.instruction for s in task.stages))
        self._publish_then_state(self._pipeline.set_task(task, self._intake.frame_time(), start))

    # --- inference thread -------------------------------------------------------------------
    def _inference_step(self) -> None:
        with self._model_lock:
            report = self._pipeline.step()
        for result in report.results:
            self._latency.add(result.estimate.latency_s)
            if result.update.accepted:
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
        if not update.events:
            return
        for event in update.events:
            if isinstance(event, FailureDetected):
                # One call site per severity: rclpy refuses a call site whose severity changes.
                text = f"{event.kind.name.lower()}: {event.description}"
                if event.terminal:
                    self.get_logger().error(text)
                else:
                    self.get_logger().warning(text)
                self._failure_pub.publish(failure_msg(event))
            elif isinstance(event, EpisodeEnded):
                self.get_logger().info(
                    f"episode {event.episode_id} ended: {event.status.name.lower()} "
                    f"({event.reason})")
                if event.reset_requested:
                    self._reset_pub.publish(reset_msg(event))
                    if self._reset is not None:
                        self._reset.request(event.episode_id)
        self._publish_state(update.state)

    def _publish_then_state(self, updates) -> None:
        """Publish what a task or episode change produced, then where things stand now."""
        for update in updates:
            self._publish_update(update)
        self._publish_state(self._pipeline.state)

    def _publish_state(self, state) -> None:
        self._state_pub.publish(state_msg(state))

    def _on_reset_outcome(self, ok: bool, text: str) -> None:
        if ok:
            self.get_logger().info(text)
        else:
            self._report_error("reset", text)

    def _report_error(self, area: str, text: str) -> None:
        if text != self._last_errors[area]:
            self.get_logger().error(text)
        self._last_errors[area] = text

    # --- timers (executor thread) -----------------------------------------------------------
    def _tick(self) -> None:
        for update in self._intake.tick():
            self._publish_update(update)

    # --- parameters -------------------------------------------------------------------------
    def _validate_parameters(self, parameters) -> SetParametersResult:
        """Refuse a change that leaves the rules invalid.

        Read-only parameters are refused by rclpy itself: their descriptors say so.
        """
        if self._settings is None:
            return SetParametersResult(successful=True)
        try:
            self._monitor_config_with(parameters)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters) -> None:
        """After an accepted change: new rules for the next episode.

        The running one keeps the rules it started with.
        """
        if self._settings is None:
            return
        self._pipeline.use_monitor_next(TaskMonitor(self._monitor_config_with(parameters)))
        self.get_logger().info(f"parameters {sorted(p.name for p in parameters)} accepted; they "
                               "apply from the next episode")

    def _monitor_config_with(self, parameters):
        values = current_values(self)
        values.update({p.name: p.value for p in parameters})
        return monitor_config(values, self._settings.monitor.cameras)

    # --- diagnostics ------------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        name = self.get_fully_qualified_name()  # two robots' nodes must not look the same
        array = DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        if self._model is None or self._settings is None:
            array.status.append(diag.unloaded_model_status(name, self._configure_error))
        else:
            array.status.append(diag.model_status(
                name, self._model, self._settings, self._latency, self._worker,
                self._pipeline.errors, self._last_errors["model"]))
        if self._cameras is not None and self._intake is not None:
            array.status.extend(diag.camera_statuses(
                name, self._intake, self._rates.rates(self._intake.stats.values()),
                self._settings.monitor.camera_stale_after_s))
        if self._pipeline is not None:
            array.status.append(diag.task_status(name, self._pipeline.state,
                                                 self._last_errors["task"],
                                                 self._pipeline.monitor.log_path))
        if self._reset is not None:
            array.status.append(diag.reset_status(name, self._reset))
        self._diag_pub.publish(array)


def main(args=None) -> int:
    # The node's log is one line per record: no carriage-return progress bars from model loading
    # (transformers reads this before it is imported).
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    return run_node(RewardNode, args)


if __name__ == "__main__":
    sys.exit(main())
