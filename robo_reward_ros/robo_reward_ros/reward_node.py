"""The reward node's ROS shell: camera and task inputs, task state, services, diagnostics.

It only translates between ROS and the core; no model runs on the executor thread.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from typing import Dict, List, Optional

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from robo_reward_msgs.msg import TaskSpec as TaskSpecMsg
from robo_reward_msgs.msg import TaskState
from robo_reward_msgs.srv import SetTask, StartEpisode
from sensor_msgs.msg import Image
from std_msgs.msg import String

from robo_reward_ros.core.image_decoding import ImageDecodeError, decode_raw
from robo_reward_ros.core.task_spec import InvalidTaskError, TaskSpec, build_task
from robo_reward_ros.task_conversions import task_from_msg
from robo_reward_ros.node_runner import run_node

# Latched: a controller or console that starts later still gets the last task and state.
LATCHED_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)


@dataclasses.dataclass
class CameraInput:
    topic: str
    frames: int = 0
    rejected: int = 0
    frames_at_last_report: int = 0
    last_receipt: Optional[float] = None
    last_error: str = ""


class RewardNode(Node):
    def __init__(self) -> None:
        super().__init__("reward_node")
        camera_topics: List[str] = list(self.declare_parameter(
            "camera_topics", ["camera/image_raw"]).value)
        instruction_topic = str(self.declare_parameter("instruction_topic", "instruction").value)
        task_topic = str(self.declare_parameter("task_topic", "task").value)
        initial_instruction = str(self.declare_parameter("instruction", "").value)
        self._diagnostics_period = float(
            self.declare_parameter("diagnostics_period_sec", 1.0).value)
        if not camera_topics:
            raise ValueError("parameter camera_topics must name at least one camera topic")
        if self._diagnostics_period <= 0.0:
            raise ValueError("parameter diagnostics_period_sec must be > 0")

        self._cameras: Dict[str, CameraInput] = {}
        for topic in camera_topics:
            self._cameras[topic] = CameraInput(topic)
            self.create_subscription(
                Image, topic, lambda msg, t=topic: self._on_image(t, msg), qos_profile_sensor_data)

        self._task: Optional[TaskSpec] = None
        self._episode_id = ""
        self._episode_count = 0
        self._run_tag = time.strftime("%Y%m%dT%H%M%S")
        self._stage_index = 0
        self._status = TaskState.STATUS_IDLE
        self._last_task_error = ""

        self._state_pub = self.create_publisher(TaskState, "task_state", LATCHED_QOS)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_subscription(String, instruction_topic, self._on_instruction, LATCHED_QOS)
        self.create_subscription(TaskSpecMsg, task_topic, self._on_task, LATCHED_QOS)
        self.create_service(SetTask, "~/set_task", self._handle_set_task)
        self.create_service(StartEpisode, "~/start_episode", self._handle_start_episode)
        self.create_timer(self._diagnostics_period, self._publish_diagnostics)
        self._last_report = time.monotonic()

        if initial_instruction.strip():
            self._set_task(build_task([initial_instruction]), start=True, reason="instruction parameter")
        else:
            self._publish_state("waiting for a task")
        self.get_logger().info(
            f"listening to cameras {camera_topics}, instruction on '{instruction_topic}', "
            f"task on '{task_topic}'")

    # --- inputs -------------------------------------------------------------------------
    def _on_image(self, topic: str, msg: Image) -> None:
        camera = self._cameras[topic]
        camera.last_receipt = time.monotonic()
        try:
            decode_raw(msg.encoding, msg.height, msg.width, msg.step, msg.data)
        except ImageDecodeError as exc:
            problem = str(exc)
            camera.rejected += 1
            if problem != camera.last_error:
                self.get_logger().warning(f"camera {topic}: frame rejected: {problem}")
            camera.last_error = problem
            return
        camera.frames += 1

    def _on_instruction(self, msg: String) -> None:
        try:
            task = build_task([msg.data])
        except InvalidTaskError as exc:
            self._reject_task(f"instruction rejected: {exc}")
            return
        self._set_task(task, start=True, reason="instruction topic")

    def _on_task(self, msg: TaskSpecMsg) -> None:
        try:
            task = task_from_msg(msg)
        except InvalidTaskError as exc:
            self._reject_task(f"task rejected: {exc}")
            return
        self._set_task(task, start=True, reason="task topic")

    def _handle_set_task(self, request: SetTask.Request, response: SetTask.Response):
        try:
            task = task_from_msg(request.task)
        except InvalidTaskError as exc:
            self._reject_task(f"task rejected: {exc}")
            response.success, response.message = False, str(exc)
            return response
        self._set_task(task, start=request.start_episode, reason="set_task service")
        response.success = True
        response.message = f"task with {task.stage_count} stage(s) set"
        response.episode_id = self._episode_id if request.start_episode else ""
        return response

    def _handle_start_episode(self, request: StartEpisode.Request, response: StartEpisode.Response):
        if self._task is None:
            response.success, response.message = False, "no task set: publish a task or call set_task first"
            return response
        self._start_episode(request.episode_id.strip(), request.reason.strip() or "reset")
        response.success, response.message = True, "episode started"
        response.episode_id = self._episode_id
        return response

    # --- task and episode bookkeeping -------------------------------------------------------
    def _reject_task(self, message: str) -> None:
        self._last_task_error = message
        self.get_logger().error(message)

    def _set_task(self, task: TaskSpec, start: bool, reason: str) -> None:
        self._task = task
        self._last_task_error = ""
        self.get_logger().info(
            f"task set from {reason}: " + " | ".join(s.instruction for s in task.stages))
        if start:
            self._start_episode("", f"new task from {reason}")
        else:
            self._status = TaskState.STATUS_IDLE
            self._publish_state(f"task set from {reason}; waiting for start_episode")

    def _start_episode(self, episode_id: str, reason: str) -> None:
        self._episode_count += 1
        self._episode_id = episode_id or f"{self._run_tag}-{self._episode_count:04d}"
        self._stage_index = 0
        self._status = TaskState.STATUS_RUNNING
        self._publish_state(f"episode started ({reason})")

    def _publish_state(self, reason: str) -> None:
        msg = TaskState()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.episode_id = self._episode_id
        msg.stage_index = self._stage_index
        msg.stage_count = self._task.stage_count if self._task else 0
        msg.instruction = self._task.stages[self._stage_index].instruction if self._task else ""
        msg.status = self._status
        msg.reason = reason
        self._state_pub.publish(msg)

    # --- diagnostics ---------------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        now = time.monotonic()
        elapsed = max(now - self._last_report, 1e-6)
        self._last_report = now
        array = DiagnosticArray()
        array.header.stamp = self.get_clock().now().to_msg()
        for camera in self._cameras.values():
            rate = (camera.frames - camera.frames_at_last_report) / elapsed
            camera.frames_at_last_report = camera.frames
            age = None if camera.last_receipt is None else now - camera.last_receipt
            if camera.frames == 0:
                level, text = DiagnosticStatus.WARN, "no usable frame received yet"
            elif camera.last_error and camera.rejected and rate == 0.0:
                level, text = DiagnosticStatus.ERROR, f"frames rejected: {camera.last_error}"
            else:
                level, text = DiagnosticStatus.OK, f"receiving at {rate:.1f} Hz"
            array.status.append(DiagnosticStatus(
                level=level, name=f"{self.get_name()}: camera {camera.topic}",
                hardware_id=camera.topic, message=text, values=[
                    KeyValue(key="frames_received", value=str(camera.frames)),
                    KeyValue(key="frames_rejected", value=str(camera.rejected)),
                    KeyValue(key="input_rate_hz", value=f"{rate:.2f}"),
                    KeyValue(key="time_since_last_frame_sec",
                             value="never" if age is None else f"{age:.3f}"),
                    KeyValue(key="last_error", value=camera.last_error),
                ]))
        task_level = DiagnosticStatus.ERROR if self._last_task_error else (
            DiagnosticStatus.OK if self._task else DiagnosticStatus.WARN)
        array.status.append(DiagnosticStatus(
            level=task_level, name=f"{self.get_name()}: task",
            message=self._last_task_error or ("episode running" if self._episode_id else "no task set"),
            values=[KeyValue(key="episode_id", value=self._episode_id),
                    KeyValue(key="stage_count",
                             value=str(self._task.stage_count if self._task else 0))]))
        self._diag_pub.publish(array)


def main(args=None) -> int:
    return run_node(RewardNode, args)


if __name__ == "__main__":
    sys.exit(main())
