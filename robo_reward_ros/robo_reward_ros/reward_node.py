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

import dataclasses
import gc
import sys
import threading
import time
from typing import List, Optional

from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import Node as LifecycleNode
from rclpy.lifecycle import State, TransitionCallbackReturn
from rclpy.task import Future as RclpyFuture
from robo_reward_msgs.msg import FailureEvent, ResetRequest, RewardEstimate
from robo_reward_msgs.msg import TaskSpec as TaskSpecMsg
from robo_reward_msgs.msg import TaskState
from robo_reward_msgs.srv import ComparePreference, SetTask, StartEpisode
from std_msgs.msg import String

from robo_reward_ros import node_diagnostics as diag
from robo_reward_ros.camera_inputs import CameraInputs, camera_qos
from robo_reward_ros.core.events import EpisodeEnded, FailureDetected
from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.image_decoding import ImageDecodeError, decode_raw, fit_pixels
from robo_reward_ros.core.periodic_worker import PeriodicWorker
from robo_reward_ros.core.reward_pipeline import RewardPipeline
from robo_reward_ros.core.task_monitor import MonitorUpdate, TaskMonitor
from robo_reward_ros.core.task_spec import InvalidTaskError, TaskSpec, build_task
from robo_reward_ros.models.backend_registry import create_reward_model, import_plugins
from robo_reward_ros.core.node_settings import NodeSettings, monitor_config, read_settings
from robo_reward_ros.node_parameters import current_values, declare_parameters
from robo_reward_ros.node_runner import run_node
from robo_reward_ros.qos_profiles import EVENTS_QOS, LATCHED_QOS, STATE_QOS
from robo_reward_ros.reset_requester import ResetRequester
from robo_reward_ros.reward_messages import (estimate_msg, failure_msg, reset_msg, state_msg,
                                             to_seconds)
from robo_reward_ros.task_conversions import task_from_msg

TICK_PERIOD_SEC = 0.2  # time limits and stale cameras are checked this often


class RewardNode(LifecycleNode):
    def __init__(self, **kwargs) -> None:
        super().__init__("reward_node", **kwargs)
        self._refused_parameters = declare_parameters(self)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._settings: Optional[NodeSettings] = None
        self._model = None
        self._pipeline: Optional[RewardPipeline] = None
        self._cameras: Optional[CameraInputs] = None
        self._worker: Optional[PeriodicWorker] = None
        self._reset: Optional[ResetRequester] = None
        self._latency = diag.LatencyWindow()
        self._model_lock = threading.Lock()  # the model is not re-entrant: scoring vs preference
        self._active_handles: List = []
        self._latest_stamp: Optional[float] = None  # newest frame stamp, and when it arrived
        self._latest_receipt = 0.0
        # The newest problem per area, for the log (once per change) and /diagnostics.
        self._last_errors = {"model": "", "task": "", "reset": ""}
        self._configure_error = ""
        self._state_pub = self.create_lifecycle_publisher(TaskState, "task_state", STATE_QOS)
        self._estimate_pub = self.create_lifecycle_publisher(RewardEstimate, "reward", EVENTS_QOS)
        self._failure_pub = self.create_lifecycle_publisher(FailureEvent, "failure_events",
                                                            EVENTS_QOS)
        self._reset_pub = self.create_lifecycle_publisher(ResetRequest, "reset_request",
                                                          STATE_QOS)
        # Diagnostics run in every state: a node that failed to configure must say why.
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._diag_timer = self.create_timer(
            float(self.get_parameter("diagnostics_period_sec").value), self._publish_diagnostics)
        self._rate_clock = time.monotonic()
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
        self._pipeline = RewardPipeline(model, TaskMonitor(self._live(settings.monitor)),
                                        settings.monitor.cameras,
                                        settings.window, settings.error_policy())
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
        self._cameras = CameraInputs(
            self, list(settings.camera_topics),
            camera_qos(settings.qos_reliability, settings.qos_depth), settings.max_pixels,
            self._deliver_frame, self._on_new_timeline, settings.max_stamp_jump_sec,
            settings.new_timeline_frames)
        self._active_handles = [
            self.create_subscription(String, settings.instruction_topic, self._on_instruction,
                                     LATCHED_QOS),
            self.create_subscription(TaskSpecMsg, settings.task_topic, self._on_task, LATCHED_QOS),
            self.create_service(SetTask, "~/set_task", self._handle_set_task),
            self.create_service(StartEpisode, "~/start_episode", self._handle_start_episode),
            self.create_service(ComparePreference, "~/compare_preference",
                                self._handle_compare_preference),
            self.create_timer(TICK_PERIOD_SEC, self._tick),
        ]
        result = super().on_activate(state)
        self._publish_state(self._pipeline.state)
        if settings.instruction.strip() and self._pipeline.task is None:
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
        """On SIGINT/SIGTERM: join the inference thread (a model step may be running in native
        code), close the episode log and free the model before the node goes."""
        self._stop_active("node shutting down")
        self._release_model()
        super().destroy_node()

    def _stop_active(self, reason: str) -> None:
        if self._worker is not None:
            if not self._worker.stop(timeout=60.0):
                self.get_logger().warning("inference step still running after 60 s")
            self._worker = None
        if self._pipeline is not None:
            self._publish_update(self._pipeline.abort_episode(self._frame_time(), reason))
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
    def _deliver_frame(self, camera: str, frame: Frame) -> None:
        started = self._pipeline.add_frame(camera, frame)
        if started is not None:
            self._publish_update(started)
        if self._latest_stamp is None or frame.stamp >= self._latest_stamp:
            self._latest_stamp = frame.stamp
            self._latest_receipt = time.monotonic()
        worker = self._worker
        if worker is not None:
            worker.notify()

    def _on_new_timeline(self, camera: str, stamp: float, reason: str) -> None:
        """The camera's clock changed for good: the episode restarts on the new timeline (time
        limits, stalls and windows would otherwise compare stamps of two clocks)."""
        self._latest_stamp, self._latest_receipt = stamp, time.monotonic()
        self._report_error("task", f"camera {camera}: {reason}")
        if self._pipeline.task is None:
            return
        for update in self._pipeline.start_episode(stamp, None, f"camera {camera}: {reason}"):
            self._publish_update(update)
        self._publish_state(self._pipeline.state)

    def _frame_time(self) -> Optional[float]:
        """Now, in frame-stamp time: the newest frame's stamp plus the wall time since it came
        (so time limits run on while a camera is silent). None before the first frame: the
        camera's clock is unknown until then (it may be sim time, a bag's, or a device's)."""
        if self._latest_stamp is None:
            return None
        return self._latest_stamp + (time.monotonic() - self._latest_receipt)

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
                self._frame_time(), request.episode_id.strip() or None,
                request.reason.strip() or "reset")
        except RuntimeError as exc:
            response.success, response.message = False, str(exc)
            return response
        for update in updates:
            self._publish_update(update)
        self._publish_state(self._pipeline.state)
        response.success, response.message = True, "episode started"
        response.episode_id = self._pipeline.state.episode_id
        return response

    def _set_task(self, task: TaskSpec, start: bool, source: str) -> None:
        self.get_logger().info(
            f"task from {source}: " + " | ".join(s.instruction for s in task.stages))
        for update in self._pipeline.set_task(task, self._frame_time(), start):
            self._publish_update(update)
        self._publish_state(self._pipeline.state)

    async def _handle_compare_preference(self, request, response):
        """A coroutine: the comparison runs on its own thread and the executor keeps serving
        frames while it waits."""
        if not self._model.capabilities.preference:
            response.success = False
            response.message = f"backend {self._model.name} has no preference head"
            return response
        try:
            if not request.instruction.strip():
                raise ImageDecodeError("the instruction is empty")
            clips = [[self._decode_clip_frame(image, i) for i, image in enumerate(clip)]
                     for clip in (request.trajectory_a, request.trajectory_b)]
            if not clips[0] or not clips[1]:
                raise ImageDecodeError("both trajectories need at least one frame")
        except ImageDecodeError as exc:
            response.success, response.message = False, str(exc)
            return response
        answer = RclpyFuture(executor=self.executor)

        def compare():
            try:
                with self._model_lock:
                    answer.set_result(self._model.prefer(request.instruction.strip(), *clips))
            except Exception as exc:
                answer.set_result(exc)

        threading.Thread(target=compare, name="preference", daemon=True).start()
        outcome = await answer
        if isinstance(outcome, Exception):
            response.success = False
            response.message = f"{type(outcome).__name__}: {outcome}"
            return response
        response.success, response.message = True, "compared"
        response.probability_a_better = float(outcome)
        response.a_preferred = outcome > 0.5
        response.backend = self._model.name
        response.model_id = self._settings.model.model_id
        return response

    def _decode_clip_frame(self, image, index: int) -> Frame:
        rgb = decode_raw(image.encoding, image.height, image.width, image.step, image.data)
        stamp = to_seconds(image.header.stamp)
        return Frame(stamp if stamp > 0.0 else float(index),
                     fit_pixels(rgb, self._settings.max_pixels))

    # --- inference thread -------------------------------------------------------------------
    def _inference_step(self) -> None:
        with self._model_lock:
            report = self._pipeline.step()
        for result in report.results:
            self._latency.add(result.estimate.latency_s)
            if result.update.accepted:
                self._estimate_pub.publish(estimate_msg(
                    result, self._settings.model.model_id, self._settings.model.precision))
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
        now_frame = self._frame_time()
        if now_frame is None:
            return
        self._publish_update(self._pipeline.tick(now_frame))
        now = time.monotonic()
        stale_after = self._pipeline.monitor.config.camera_stale_after_s
        for stats in self._cameras.stats.values():
            age = stats.age(now)
            if age is not None and age > stale_after and not stats.stale_reported:
                stats.stale_reported = True
                self._publish_update(self._pipeline.report_camera_stale(stats.name, now_frame, age))

    # --- parameters -------------------------------------------------------------------------
    def _on_set_parameters(self, parameters) -> SetParametersResult:
        # Read-only parameters are refused by rclpy itself (their descriptors say so).
        changed = {p.name: p.value for p in parameters}
        if self._settings is None:
            return SetParametersResult(successful=True)
        values = current_values(self)
        values.update(changed)
        try:
            config = monitor_config(values, self._settings.monitor.cameras)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        self._pipeline.use_monitor_next(TaskMonitor(self._live(config)))
        self.get_logger().info(f"parameters {sorted(changed)} accepted; they apply from the "
                               "next episode")
        return SetParametersResult(successful=True)

    @staticmethod
    def _live(config):
        """Live, camera outages are seen by the node's clock (see MonitorConfig.gaps_are_outages)."""
        return dataclasses.replace(config, gaps_are_outages=False)

    # --- diagnostics ------------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        now = time.monotonic()
        elapsed = max(now - self._rate_clock, 1e-6)
        self._rate_clock = now
        name = self.get_name()
        array = DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        array.status.append(self._model_status(name))
        if self._cameras is not None and self._pipeline is not None:
            stale_after = self._settings.monitor.camera_stale_after_s
            for stats in self._cameras.stats.values():
                rate = (stats.received - stats.received_at_last_report) / elapsed
                stats.received_at_last_report = stats.received
                window = self._pipeline.windows[stats.name]
                array.status.append(diag.camera_status(
                    name, stats, now, rate, len(window), window.max_frames, stale_after))
        if self._pipeline is not None:
            state = self._pipeline.state
            level = diag.OK if state.episode_id else diag.WARN
            array.status.append(diag.status(
                f"{name}: task", level, state.reason or state.status.name.lower(), {
                    "last_error": self._last_errors["task"],
                    "status": state.status.name.lower(),
                    "episode_id": state.episode_id,
                    "stage": f"{state.stage_index + 1}/{state.num_stages}",
                    "instruction": state.instruction,
                    "stage_progress": state.stage_progress,
                    "estimates_accepted": state.estimates_accepted,
                    "estimates_rejected": state.estimates_rejected,
                    "episode_log": self._pipeline.monitor.log_path,
                }))
        if self._reset is not None:
            stats = self._reset.stats
            array.status.append(diag.status(
                f"{name}: controller reset", diag.WARN if stats.last_error else diag.OK,
                stats.last_error or "ok", {"service": self._reset.service, **vars(stats)}))
        self._diag_pub.publish(array)

    def _model_status(self, name: str):
        if self._model is None or self._settings is None:
            return diag.status(f"{name}: model", diag.ERROR if self._configure_error else diag.WARN,
                               self._configure_error or "not loaded (node not configured)",
                               {"loaded": False})
        latency = self._latency.percentiles() or {}
        worker = self._worker
        errors = self._pipeline.errors
        level = diag.ERROR if errors.consecutive else diag.OK
        return diag.status(f"{name}: model", level, self._last_errors["model"] or "loaded", {
            "loaded": True,
            "backend": self._model.name,
            "model_id": self._settings.model.model_id,
            "device": getattr(self._model, "device", self._settings.model.device),
            "precision": self._settings.model.precision,
            "inference_latency_p50_sec": latency.get("p50"),
            "inference_latency_p95_sec": latency.get("p95"),
            "inference_steps": worker.steps if worker else 0,
            "inference_overruns": worker.overruns if worker else 0,
            "model_errors_total": errors.total,
            "model_errors_consecutive": errors.consecutive,
            "last_error": self._last_errors["model"],
        })


def main(args=None) -> int:
    return run_node(RewardNode, args)


if __name__ == "__main__":
    sys.exit(main())
