# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A controller's connection to one reward node: steps, task state, reset requests, services.

Steps are matched to a controller's frames by stamp: the step covering frame stamp ``t`` is the
first step of the episode whose newest frame stamp is at or after ``t`` (the node scores the
newest window, which holds the newest frame), or the episode's terminal step if it ended first.
Nothing is ever made up: a step that does not come in time is a StepTimeout, a stamp older than
the steps still kept is StepUnavailable, an episode that another caller (or a restarted node)
replaced is EpisodeGone.

A service's answer and the task state topic are two channels, so right after this client starts
an episode the state it holds can still name the one before (seen in tests: the previous
episode's "aborted: environment reset"). Only an episode that the state topic named first after
this client learned of the one waited on replaces it.
"""
from __future__ import annotations

import atexit
import collections
import itertools
import os
import threading
import time
from typing import Callable, Deque, Dict, List, Optional, Sequence

import rclpy
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rcl_interfaces.srv import SetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from robo_reward_msgs.msg import (DecidedBy, FailureEvent, OperatorLabel, OperatorVerdict, ResetRequest,
                                  RewardStep, StageSpec, TaskSpec, TaskState)
from robo_reward_msgs.srv import (DismissAlert, QueryProgress, ReportResetDone, SetIntervention, SetTask,
                                  StartEpisode, SubmitVerdict)

from robo_reward_ros.core.stamps import to_seconds
from robo_reward_ros.node.qos_profiles import EVENTS_QOS, LATCHED_LISTENER_QOS

STAMP_TOLERANCE_SEC = 1e-6  # stamps travel as integer nanoseconds
FIRST_STATE_WAIT_SEC = 1.0  # before its first request, how long a client waits for the latched state
_CLIENT_IDS = itertools.count()
VERDICTS = {"success": OperatorVerdict.SUCCESS, "failure": OperatorVerdict.FAILURE,
            "not_yet": OperatorVerdict.NOT_YET, "veto": OperatorVerdict.NOT_YET}
# DecidedBy.source as the word a controller reads in info["decided_by"].
DECIDERS = {DecidedBy.NONE: "", DecidedBy.MODEL: "model", DecidedBy.OPERATOR: "operator",
            DecidedBy.TIME_LIMIT: "time_limit", DecidedBy.ABORT: "abort"}


class RewardNodeError(RuntimeError):
    """The reward node is not there, or refused a request (the message says why)."""


class StepTimeout(TimeoutError):
    """No step covering the frame came in time: the reward is missing, not zero."""


class StepUnavailable(LookupError):
    """The stamp is older than every step the client still keeps."""


class EpisodeGone(RuntimeError):
    """The episode waited on is no longer the node's (a new one started, or the node restarted)."""


class RewardClient:
    """One reward node's steps and services, from a controller's Python code.

    ``namespace``: the node's namespace (``/robot1``); ``node_name``: its name. rclpy is initialised
    here when the caller has not done so (``context`` for a context of the caller's).
    """

    def __init__(self, namespace: str = "", node_name: str = "reward_node", history: int = 2000,
                 context=None) -> None:
        self._owns_init = context is None and not rclpy.ok()
        if self._owns_init:
            rclpy.init()
        prefix = namespace.rstrip("/")
        self.node = rclpy.create_node(f"reward_client_{os.getpid()}_{next(_CLIENT_IDS)}",
                                      namespace=prefix or "/", context=context)
        self._node_path = f"{prefix}/{node_name}"
        self._changed = threading.Condition()
        self._steps: Deque[RewardStep] = collections.deque(maxlen=history)
        self._dropped_before: Optional[float] = None  # newest stamp that fell out of the history
        self._state: Optional[TaskState] = None
        # The order in which task states first named each episode, and where in that order this
        # client learned of the episodes it started (the module docstring says why).
        self._first_named: Dict[str, int] = {}
        self._learned_at: Dict[str, int] = {}
        self._failures: Deque[FailureEvent] = collections.deque(maxlen=history)
        self._labels: Deque[OperatorLabel] = collections.deque(maxlen=history)
        self._reset_callbacks: List[Callable[[ResetRequest], None]] = []
        self.node.create_subscription(RewardStep, f"{prefix}/reward_step", self._on_step,
                                      EVENTS_QOS)
        self.node.create_subscription(TaskState, f"{prefix}/task_state", self._on_state,
                                      LATCHED_LISTENER_QOS)
        self.node.create_subscription(FailureEvent, f"{prefix}/failure_events",
                                      self._on_failure, EVENTS_QOS)
        self.node.create_subscription(ResetRequest, f"{prefix}/reset_request", self._on_reset,
                                      EVENTS_QOS)
        self.node.create_subscription(OperatorLabel, f"{prefix}/operator_labels", self._on_label,
                                      EVENTS_QOS)
        self._start = self.node.create_client(StartEpisode, f"{self._node_path}/start_episode")
        self._set_task = self.node.create_client(SetTask, f"{self._node_path}/set_task")
        self._query = self.node.create_client(QueryProgress, f"{self._node_path}/query_progress")
        # The operator's and the lifecycle services are made on first use: a controller whose
        # SROS2 enclave may not judge or reload (config/sros2_caller_policy.xml) never creates them.
        self._service_clients: Dict[str, object] = {}
        self._executor = SingleThreadedExecutor(context=context)
        self._executor.add_node(self.node)
        self._spinning = True
        self._closed = False
        self._thread = threading.Thread(target=self._spin, name="reward-client", daemon=True)
        self._thread.start()
        # A script that ends without close() would leave the thread inside rclpy's wait when the
        # interpreter finalizes; CPython then ends the daemon thread with a forced unwind through
        # C++ frames, and the process aborts ("terminate called without an active exception",
        # exit 134: 20 of 20 runs here). atexit runs before that, with the thread still joinable.
        atexit.register(self.close)

    # --- what the node says -------------------------------------------------------------------
    def latest_step(self) -> Optional[RewardStep]:
        with self._changed:
            return self._steps[-1] if self._steps else None

    def steps(self, episode_id: str) -> List[RewardStep]:
        """Return the steps of an episode still kept, in the order received."""
        with self._changed:
            return [s for s in self._steps if s.episode_id == episode_id]

    def task_state(self) -> Optional[TaskState]:
        with self._changed:
            return self._state

    def failures(self, episode_id: str) -> List[FailureEvent]:
        """Failure events of an episode received so far (warnings and terminal ones)."""
        with self._changed:
            return [f for f in self._failures if f.episode_id == episode_id]

    def labels(self, episode_id: str = "") -> List[OperatorLabel]:
        """Operator labels the node published (every input, applied, late or refused), of one episode or all."""
        with self._changed:
            return [label for label in self._labels if not episode_id or label.episode_id == episode_id]

    def on_reset_request(self, callback: Callable[[ResetRequest], None]) -> None:
        """Call ``callback(request)`` (on the client's thread) for every reset request."""
        self._reset_callbacks.append(callback)

    def wait_for_step(self, stamp: float, timeout_sec: float,
                      episode_id: Optional[str] = None) -> RewardStep:
        """Return the step covering frame stamp ``stamp`` (of ``episode_id`` when given).

        Raises StepTimeout, StepUnavailable or EpisodeGone; never returns a made-up step.
        """
        deadline = time.monotonic() + timeout_sec
        with self._changed:
            while True:
                # The first step at or after an evicted one's stamp may itself be gone.
                if self._dropped_before is not None and stamp <= self._dropped_before:
                    raise StepUnavailable(
                        f"no step for frame stamp {stamp:.3f} s is kept any more (the client "
                        f"keeps the newest {self._steps.maxlen} steps)")
                step = self._covering(stamp, episode_id)
                if step is not None:
                    return step
                if episode_id and self._replaced(episode_id):
                    raise EpisodeGone(
                        f"episode {episode_id} is no longer running: the node now runs "
                        f"{self._state.episode_id} ({self._state.reason})")
                left = deadline - time.monotonic()
                if left <= 0.0:
                    raise StepTimeout(f"no step covering frame stamp {stamp:.3f} s within "
                                      f"{timeout_sec:g} s")
                self._changed.wait(left)

    def _replaced(self, episode_id: str) -> bool:
        current = self._state.episode_id if self._state is not None else ""
        if not current or current == episode_id:
            return False
        learned = self._learned_at.get(episode_id)
        # Not started here: the state says what runs. Started here: only a later episode counts.
        return learned is None or self._first_named[current] >= learned

    def _learned(self, episode_id: str) -> str:
        if episode_id:
            with self._changed:
                # A state may name the episode before the service's answer arrives (another
                # controller's episode right after it, too): its place is where a state first
                # named it, else after every episode named so far.
                self._learned_at.setdefault(episode_id,
                                            self._first_named.get(episode_id, len(self._first_named)))
        return episode_id

    def _covering(self, stamp: float, episode_id: Optional[str]) -> Optional[RewardStep]:
        for step in self._steps:
            if episode_id and step.episode_id != episode_id:
                continue
            if to_seconds(step.header.stamp) >= stamp - STAMP_TOLERANCE_SEC or \
                    step.terminated or step.truncated:
                return step
        return None

    # --- asking the node ----------------------------------------------------------------------
    def wait_for_node(self, timeout_sec: float) -> bool:
        """Wait until the node's services are discovered; False when they are not in time."""
        deadline = time.monotonic() + timeout_sec
        for client in (self._start, self._set_task):
            if not client.wait_for_service(timeout_sec=max(0.0, deadline - time.monotonic())):
                return False
        return True

    def start_episode(self, episode_id: str = "", reason: str = "controller reset",
                      timeout_sec: float = 10.0) -> str:
        """Start a new episode of the current task; returns its id."""
        response = self._call(self._start, StartEpisode.Request(episode_id=episode_id,
                                                                reason=reason), timeout_sec)
        return self._learned(response.episode_id)

    def set_task(self, instructions: Sequence[str], start_episode: bool = True,
                 timeout_sec: float = 10.0) -> str:
        """Set a task of one stage per instruction; returns the new episode's id (or "")."""
        task = TaskSpec(stages=[StageSpec(instruction=text) for text in instructions])
        response = self._call(self._set_task, SetTask.Request(task=task,
                                                              start_episode=start_episode),
                              timeout_sec)
        return self._learned(response.episode_id)

    def query_progress(self, timeout_sec: float = 10.0):
        """Score the current window now (QueryProgress response; no reward, no decision)."""
        return self._call(self._query, QueryProgress.Request(), timeout_sec)

    # --- acting for an operator ---------------------------------------------------------------
    def submit_verdict(self, verdict, source: str, reason: str = "", episode_id: str = "",
                       stage_number: int = 0, timeout_sec: float = 10.0) -> OperatorLabel:
        """Judge the running stage: ``success``, ``failure`` or ``not_yet`` (a veto), or an OperatorVerdict constant.

        Returns the label the node recorded; a refusal raises RewardNodeError with the node's reason.
        """
        code = VERDICTS.get(verdict.strip().lower().replace(" ", "_"), 0) if isinstance(verdict, str) \
            else int(verdict)
        request = SubmitVerdict.Request(verdict=OperatorVerdict(
            episode_id=episode_id, stage_number=stage_number, verdict=code, source=source, reason=reason))
        return self._call(self._service(SubmitVerdict, "submit_verdict"), request, timeout_sec).label

    def set_intervention(self, active: bool, source: str, reason: str = "",
                         timeout_sec: float = 10.0) -> OperatorLabel:
        """Say that a person takes over (True) or hands control back (False)."""
        request = SetIntervention.Request(active=active, source=source, reason=reason)
        return self._call(self._service(SetIntervention, "set_intervention"), request, timeout_sec).label

    def report_reset_done(self, source: str, reason: str = "", timeout_sec: float = 10.0) -> str:
        """Say the scene is reset; returns the episode the node started because of it ("" if none)."""
        response = self._call(self._service(ReportResetDone, "report_reset_done"),
                              ReportResetDone.Request(source=source, reason=reason), timeout_sec)
        return self._learned(response.episode_id)

    def dismiss_alert(self, source: str, kind: int = 0, episode_id: str = "", reason: str = "",
                      timeout_sec: float = 10.0) -> OperatorLabel:
        """Mark a failure warning (FailureEvent.KIND_*, 0: the newest) a false alarm."""
        request = DismissAlert.Request(episode_id=episode_id, kind=kind, source=source, reason=reason)
        return self._call(self._service(DismissAlert, "dismiss_alert"), request, timeout_sec).label

    # --- the node's model -----------------------------------------------------------------------
    def reload_model(self, model_id: str, timeout_sec: float = 300.0) -> None:
        """Swap the node's checkpoint without a restart: deactivate, clean up, set ``model.id``, configure, activate.

        For a controller that fine-tunes the model it learns from (examples/rl_from_node_rewards.py).
        From whichever of those states the node is in; the running episode ends as a deactivation
        ends it, the task stays. A refused step raises RewardNodeError (a checkpoint that does not
        load, say: the node is then unconfigured, and a call with a loadable one recovers).
        Under SROS2 the controllers' policy (config/sros2_caller_policy.xml) grants no lifecycle or
        parameter service: a training set-up that reloads needs an enclave of its own that does.
        """
        deadline = time.monotonic() + timeout_sec

        def left() -> float:
            return max(1.0, deadline - time.monotonic())

        change = self._service(ChangeState, "change_state")
        state = self._call_unchecked(self._service(GetState, "get_state"), GetState.Request(), left()).current_state.id
        steps = {State.PRIMARY_STATE_ACTIVE: [Transition.TRANSITION_DEACTIVATE, Transition.TRANSITION_CLEANUP],
                 State.PRIMARY_STATE_INACTIVE: [Transition.TRANSITION_CLEANUP],
                 State.PRIMARY_STATE_UNCONFIGURED: []}
        if state not in steps:
            raise RewardNodeError(f"{self._node_path} is in lifecycle state {state}: not one a model is swapped from")

        def transition(transition_id: int) -> None:
            request = ChangeState.Request(transition=Transition(id=transition_id))
            if not self._call_unchecked(change, request, left()).success:
                raise RewardNodeError(f"{self._node_path}: lifecycle transition {transition_id} refused "
                                      f"(model {model_id}; the node's log says why)")

        for transition_id in steps[state]:
            transition(transition_id)
        request = SetParameters.Request(parameters=[Parameter("model.id", value=model_id).to_parameter_msg()])
        result = self._call_unchecked(self._service(SetParameters, "set_parameters"), request, left()).results[0]
        if not result.successful:
            raise RewardNodeError(f"{self._node_path}: model.id refused: {result.reason}")
        transition(Transition.TRANSITION_CONFIGURE)
        transition(Transition.TRANSITION_ACTIVATE)

    def _service(self, service_type, name: str):
        """Return a client of one of the node's own services, made on first use."""
        with self._changed:
            if name not in self._service_clients:
                self._service_clients[name] = self.node.create_client(service_type, f"{self._node_path}/{name}")
            return self._service_clients[name]

    def _call(self, client, request, timeout_sec: float):
        response = self._call_unchecked(client, request, timeout_sec)
        if not response.success:
            raise RewardNodeError(f"{client.srv_name} refused: {response.message}")
        return response

    def _call_unchecked(self, client, request, timeout_sec: float):
        deadline = time.monotonic() + timeout_sec
        if not client.wait_for_service(timeout_sec=timeout_sec):
            raise RewardNodeError(f"no reward node answers on {client.srv_name} (waited "
                                  f"{timeout_sec:g} s): is it running, in this namespace?")
        with self._changed:  # the latched state from before this request, so it is not news after
            self._changed.wait_for(lambda: self._state is not None, min(
                FIRST_STATE_WAIT_SEC, max(0.0, deadline - time.monotonic())))
        done = threading.Event()
        future = client.call_async(request)
        future.add_done_callback(lambda _: done.set())
        if not done.wait(max(0.0, deadline - time.monotonic())):
            client.remove_pending_request(future)
            raise RewardNodeError(f"{client.srv_name} did not answer within {timeout_sec:g} s")
        return future.result()

    # --- the client's thread ------------------------------------------------------------------
    def _spin(self) -> None:
        while self._spinning:
            try:
                self._executor.spin_once(timeout_sec=0.1)
            except Exception:  # the context went down under us: the client is closing
                if not self._spinning:
                    return
                raise

    def _on_step(self, msg: RewardStep) -> None:
        with self._changed:
            if len(self._steps) == self._steps.maxlen:
                self._dropped_before = to_seconds(self._steps[0].header.stamp)
            self._steps.append(msg)
            self._changed.notify_all()

    def _on_state(self, msg: TaskState) -> None:
        with self._changed:
            self._first_named.setdefault(msg.episode_id, len(self._first_named))
            self._state = msg
            self._changed.notify_all()

    def _on_failure(self, msg: FailureEvent) -> None:
        with self._changed:
            self._failures.append(msg)

    def _on_label(self, msg: OperatorLabel) -> None:
        with self._changed:
            self._labels.append(msg)
            self._changed.notify_all()

    def _on_reset(self, msg: ResetRequest) -> None:
        for callback in list(self._reset_callbacks):
            callback(msg)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self._spinning = False
        self._thread.join(timeout=10.0)
        self._executor.shutdown(timeout_sec=1.0)
        if self._thread.is_alive():
            # A callback of the caller's still runs on the client's thread: destroying the node
            # under a spinning executor can crash the process; leave the node to the exit.
            self.node.get_logger().warning("reward client: a callback did not return within 10 s; "
                                           "the client's node is left to the process exit")
        else:
            self.node.destroy_node()
        if self._owns_init:
            rclpy.try_shutdown()

    def __enter__(self) -> "RewardClient":
        return self

    def __exit__(self, *_) -> None:
        self.close()
