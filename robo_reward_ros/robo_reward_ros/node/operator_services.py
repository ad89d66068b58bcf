# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The operator's interfaces of an active node: verdicts (a service and a topic), takeovers, reset-done, dismissals.

Translation only: the pipeline's monitor decides and records (core/operator_inputs.py). Each call
runs under the node's state lock in the default callback group, like frames and tasks, so an
operator's decision and the model's never interleave. Every input is answered and echoed on
``operator_labels``; what it changed (a step, events, the state) is published before the answer.
"""
from __future__ import annotations

from typing import Callable, List

from robo_reward_msgs.msg import OperatorVerdict
from robo_reward_msgs.srv import DismissAlert, ReportResetDone, SetIntervention, SubmitVerdict

from robo_reward_ros.core.call_budget import CallBudget
from robo_reward_ros.core.log_text import escape_controls
from robo_reward_ros.core.operator_labels import OperatorAnswer
from robo_reward_ros.node.messages import label_msg
from robo_reward_ros.node.qos_profiles import EVENTS_QOS, SERVICE_QOS


class OperatorServices:
    """``~/submit_verdict``, ``~/verdict``, ``~/set_intervention``, ``~/report_reset_done``, ``~/dismiss_alert``."""

    def __init__(self, node, pipeline, frame_time: Callable[[], object], publish: Callable,
                 label_publisher, budget: CallBudget, lock, report_error: Callable[[str, str], None]) -> None:
        self._node = node
        self._pipeline = pipeline
        self._frame_time = frame_time
        self._publish = publish  # publishes a MonitorUpdate (step, events) and then the state
        self._labels = label_publisher
        self._budget = budget
        self._lock = lock
        self._report_error = report_error

    def create(self) -> List:
        """Create the services and the verdict subscription; return their handles (destroyed at deactivate)."""
        node = self._node
        return [
            node.create_service(SubmitVerdict, "~/submit_verdict", self._submit_verdict,
                                qos_profile=SERVICE_QOS),
            node.create_subscription(OperatorVerdict, "~/verdict", self._on_verdict, EVENTS_QOS),
            node.create_service(SetIntervention, "~/set_intervention", self._set_intervention,
                                qos_profile=SERVICE_QOS),
            node.create_service(ReportResetDone, "~/report_reset_done", self._report_reset_done,
                                qos_profile=SERVICE_QOS),
            node.create_service(DismissAlert, "~/dismiss_alert", self._dismiss_alert,
                                qos_profile=SERVICE_QOS),
        ]

    # --- the interfaces ---------------------------------------------------------------------------
    def _submit_verdict(self, request, response):
        return self._serve(response, lambda: self._verdict(request.verdict))

    def _on_verdict(self, msg: OperatorVerdict) -> None:
        self._serve(None, lambda: self._verdict(msg))

    def _verdict(self, verdict: OperatorVerdict) -> OperatorAnswer:
        return self._pipeline.operator_verdict(self._frame_time(), verdict.verdict, verdict.source,
                                               verdict.reason, verdict.episode_id,
                                               int(verdict.stage_number))

    def _set_intervention(self, request, response):
        return self._serve(response, lambda: self._pipeline.set_intervention(
            self._frame_time(), request.active, request.source, request.reason))

    def _report_reset_done(self, request, response):
        answer = None

        def report() -> OperatorAnswer:
            nonlocal answer
            answer = self._pipeline.reset_done(self._frame_time(), request.source, request.reason)
            return answer
        response = self._serve(response, report)
        response.episode_id = answer.next_episode_id if answer is not None else ""
        return response

    def _dismiss_alert(self, request, response):
        return self._serve(response, lambda: self._pipeline.dismiss_alert(
            self._frame_time(), request.episode_id, int(request.kind), request.source, request.reason))

    # --- one way for all of them --------------------------------------------------------------------
    def _serve(self, response, take: Callable[[], OperatorAnswer]):
        """Take one input within the budget; publish what it changed, its label, and answer."""
        if not self._budget.take():
            text = f"operator input refused: {self._budget.busy_reason()}"
            self._report_error("operator", text)
            if response is not None:
                response.success, response.message = False, text
            return response
        with self._lock:
            try:
                answer = take()
            except Exception as exc:  # every call gets an answer, whatever went wrong
                text = f"operator input failed: {type(exc).__name__}: {exc}"
                self._report_error("operator", text)
                if response is not None:
                    response.success, response.message = False, text
                return response
            # The label (the cause) before what it changed (the effect), as a reader expects.
            label = label_msg(answer.label)
            self._labels.publish(label)
            self._publish(answer.update)
        self._log(answer)
        if response is not None:
            response.success, response.message, response.label = answer.accepted, answer.message, label
        return response

    def _log(self, answer: OperatorAnswer) -> None:
        label = answer.label
        text = escape_controls(f"operator {label.source or '(no source)'}, {label.kind.name.lower()} "
                               f"on episode {label.episode_id or '-'}: {answer.message}")
        if answer.accepted:
            self._node.get_logger().info(text)
        else:  # a refusal is the operator's to fix, not a fault of the node
            self._node.get_logger().warning(text)
