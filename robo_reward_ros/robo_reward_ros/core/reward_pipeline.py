# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Frames -> stage window -> reward model -> task monitor: the one reward loop.

The node runs it live (frames from the executor thread, ``step`` on the inference thread) and
the offline tools run it on bags, so both decide the same way. The model runs outside the
lock: a service call or a new frame never waits for inference, and a result computed on a stage
or episode that ended meanwhile is dropped instead of being credited to the next one.
"""
from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple

from robo_reward_ros.core.episode_ids import checked_episode_id, new_episode_id
from robo_reward_ros.core.events import RewardEstimate, RewardStep, StageAdvanced, TaskStatus
from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.frame_window import FrameWindow
from robo_reward_ros.core.monitor_update import MonitorState, MonitorUpdate
from robo_reward_ros.core.operator_labels import OperatorAnswer
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import TaskSpec
from robo_reward_ros.core.verifier import Verifier, VerifierReading


@dataclasses.dataclass(frozen=True)
class WindowConfig:
    """Per-camera window bounds (see FrameWindow); ``min_frames`` before the first score."""

    max_frames: int = 32
    min_interval_sec: float = 0.1
    max_age_sec: float = 0.0
    min_frames: int = 1


@dataclasses.dataclass(frozen=True)
class CameraResult:
    """One camera's scoring in a step: what the model said and what the monitor made of it.

    The monitor decides once per step over all its cameras: every camera's ``update`` has the
    step's reward, state and whether this camera's estimate was taken; the step's events and its
    RewardStep come once, in the last camera's ``update``. ``step`` is the step this estimate went
    into (the same for every camera of the step; None when it was not taken).
    """

    camera: str
    estimate: RewardEstimate
    update: MonitorUpdate
    frame_count: int  # frames of the window the model was given
    step: Optional[RewardStep] = None


@dataclasses.dataclass(frozen=True)
class StepReport:
    results: Tuple[CameraResult, ...] = ()
    # Updates not tied to one camera's estimate (a model-error event after repeated failures).
    updates: Tuple[MonitorUpdate, ...] = ()
    error: str = ""  # why this step's scoring failed ("" when it did not)
    dropped: int = 0  # estimates discarded because the stage/episode changed while scoring


@dataclasses.dataclass(frozen=True)
class ProgressQuery:
    """The model's reading of the newest windows now, with the stage's trend; no decision made."""

    state: MonitorState
    progress: float
    success_prob: Optional[float]
    stamp: float
    trend_per_sec: float
    stalled: bool


class ModelErrorPolicy:
    """Consecutive model failures: back off between attempts, report after ``report_after``.

    One failure (a transient out-of-memory) only skips a step; a persistent one becomes a
    model-error event. Wait before attempt n+1 is min(base * 2**(n-1), max) seconds.
    """

    def __init__(self, report_after: int = 3, base_backoff_sec: float = 0.5,
                 max_backoff_sec: float = 10.0) -> None:
        if report_after < 1 or base_backoff_sec < 0.0 or max_backoff_sec < base_backoff_sec:
            raise ValueError("report_after >= 1 and 0 <= base_backoff_sec <= max_backoff_sec")
        self.report_after = report_after
        self.base = base_backoff_sec
        self.max = max_backoff_sec
        self.consecutive = 0
        self.total = 0
        self._retry_at = 0.0

    def ready(self, now: float) -> bool:
        return now >= self._retry_at

    def failed(self, now: float) -> bool:
        """Record a failure; True when it should be reported as a model error."""
        self.consecutive += 1
        self.total += 1
        self._retry_at = now + min(self.base * 2 ** (self.consecutive - 1), self.max)
        return self.consecutive == self.report_after

    def succeeded(self) -> None:
        self.consecutive = 0
        self._retry_at = 0.0


class RewardPipeline:
    def __init__(self, model, monitor: TaskMonitor, cameras: Sequence[str],
                 window: WindowConfig = WindowConfig(),
                 errors: Optional[ModelErrorPolicy] = None, clock=time.monotonic,
                 verifier: Optional[Verifier] = None) -> None:
        """Build the loop; ``verifier`` is the second model the monitor's in-band decisions wait for (None: none)."""
        if not cameras:
            raise ValueError("at least one camera is needed")
        self.model = model
        self.verifier = verifier
        self.monitor = monitor
        self.window_config = window
        self.windows: Dict[str, FrameWindow] = {
            camera: FrameWindow(window.max_frames, window.min_interval_sec, window.max_age_sec)
            for camera in cameras}
        self.errors = errors or ModelErrorPolicy()
        self._clock = clock
        self._lock = threading.RLock()
        self._task: Optional[TaskSpec] = None
        self._next_monitor: Optional[TaskMonitor] = None
        # An episode asked for before any frame arrived: it starts at the first frame's stamp,
        # because until then nothing says which clock the camera stamps with.
        self._pending_episode: Optional[Tuple[str, str]] = None
        self._generation = 0  # changes whenever the frames being scored stop being current
        # Per-stage model state (caches, TOPReward's normaliser) is dropped by the thread that
        # scores, before its next query: a reset from another thread could land in the middle
        # of a query (a cache cleared under it) or before a stale query's state update.
        self._model_reset_due = False
        # Per camera, what was scored last (generation, newest stamp): a window that has not
        # changed is not scored again; a silent camera must not look like a robot standing still.
        self._scored: Dict[str, Tuple[int, float]] = {}

    # --- task and episode (any thread) ------------------------------------------------------
    @property
    def task(self) -> Optional[TaskSpec]:
        return self._task

    @property
    def episode_active(self) -> bool:
        """An episode runs, or waits for its first frame."""
        return self._pending_episode is not None or self.monitor.running

    @property
    def state(self) -> MonitorState:
        with self._lock:
            if self._pending_episode is not None:
                task = self._task
                return MonitorState(
                    status=TaskStatus.IDLE, episode_id=self._pending_episode[0],
                    num_stages=task.stage_count, instruction=task.stages[0].instruction,
                    reason="the episode starts with the first camera frame")
            return self.monitor.state

    def set_task(self, task: TaskSpec, stamp: Optional[float], start: bool,
                 episode_id: Optional[str] = None) -> List[MonitorUpdate]:
        """Replace the task; a running episode ends (aborted) first.

        ``stamp`` None: no frame has arrived yet, so a started episode waits for the first one.
        Raises InvalidEpisodeIdError (nothing changed) for an unusable ``episode_id``.
        """
        episode_id = checked_episode_id(episode_id)
        with self._lock:
            updates = [self._abort(stamp, "the task changed")]
            self._task = task
            self._restart_windows(None, include_start=True)
            if start:
                updates.append(self._start(stamp, episode_id))
            return [u for u in updates if u is not None and u.events]

    def start_episode(self, stamp: Optional[float], episode_id: Optional[str] = None,
                      reason: str = "reset") -> List[MonitorUpdate]:
        """Start a new episode; raise RuntimeError without a task, InvalidEpisodeIdError for an unusable id."""
        episode_id = checked_episode_id(episode_id)
        with self._lock:
            if self._task is None:
                raise RuntimeError("no task set: set a task before starting an episode")
            updates = [self._abort(stamp, reason), self._start(stamp, episode_id)]
            return [u for u in updates if u is not None and u.events]

    def abort_episode(self, stamp: Optional[float], reason: str) -> MonitorUpdate:
        with self._lock:
            update = self._abort(stamp, reason)
            self._restart_windows(None, include_start=True)
            return update

    def _abort(self, stamp: Optional[float], reason: str) -> MonitorUpdate:
        self._pending_episode = None
        when = self.monitor.state.stamp if stamp is None else stamp
        return self.monitor.abort_episode(when, reason)

    def use_monitor_next(self, monitor: TaskMonitor) -> None:
        """Use new rules (thresholds changed at run time) for the next episode.

        The running one keeps the rules it started with.
        """
        with self._lock:
            self._next_monitor = monitor

    def _start(self, stamp: Optional[float], episode_id: Optional[str]) -> Optional[MonitorUpdate]:
        if stamp is None:
            self._pending_episode = (episode_id or new_episode_id(), "")
            self._restart_windows(None, include_start=True)
            return None
        if self._next_monitor is not None:
            self._next_monitor.take_log(self.monitor)
            self.monitor.close()
            self.monitor, self._next_monitor = self._next_monitor, None
        update = self.monitor.start_episode(self._task, stamp, episode_id)
        self._restart_windows(stamp, include_start=True)
        self.errors.succeeded()
        return update

    def _restart_windows(self, stamp: Optional[float], include_start: bool) -> None:
        for window in self.windows.values():
            window.restart(stamp, include_start)
        self._generation += 1
        self._model_reset_due = True  # per-stage caches and normalisers must not carry over

    # --- inputs (executor thread) ---------------------------------------------------------------
    def add_frame(self, camera: str, frame: Frame) -> Optional[MonitorUpdate]:
        """Return the episode start when this frame starts a waiting episode.

        Raises FrameRejected (stamps back, previous stage) or KeyError (unknown camera).
        """
        started = None
        if self._pending_episode is not None:
            with self._lock:
                if self._pending_episode is not None:
                    episode_id = self._pending_episode[0]
                    self._pending_episode = None
                    started = self._start(frame.stamp, episode_id)
        self.windows[camera].add(frame)
        return started

    # --- scoring (inference thread) -------------------------------------------------------------
    def step(self) -> StepReport:
        """Score the newest window of every camera that has enough frames."""
        with self._lock:
            reset, self._model_reset_due = self._model_reset_due, False
            ready = self.monitor.running and self.errors.ready(self._clock())
            generation = self._generation
            instruction = self.monitor.state.instruction
            batch = [(camera, window.snapshot()) for camera, window in self.windows.items()]
        if reset:
            self.model.reset()
        batch = [(c, f) for c, f in batch if len(f) >= self.window_config.min_frames
                 and self._scored.get(c) != (generation, f[-1].stamp)]
        if not ready or not batch:
            return StepReport()
        try:
            scored = self._score(instruction, batch)
        except Exception as exc:  # out of memory, NaN output, a bug: skip, back off, report
            camera = batch[0][0] if len(batch) == 1 else ""
            report = self._failed(max(f[-1].stamp for _, f in batch), camera, exc)
            if self.errors.consecutive % self.errors.report_after == 0:
                removed = self._remove_frames_the_model_fails_on(instruction, batch)
                if removed:
                    report = dataclasses.replace(report, error=f"{report.error}; {removed}")
            return report
        with self._lock:
            if generation != self._generation:  # the stage or episode changed while scoring
                return StepReport(dropped=len(scored))
            self.errors.succeeded()
            for camera, frames, _ in scored:
                self._scored[camera] = (generation, frames[-1].stamp)
            update = self.monitor.update_step([estimate for _, _, estimate in scored])
            self._follow(update)
            waiting = self.monitor.verifier_question()
        answers = self._second_opinion(waiting, instruction, generation,
                                       [frames for _, frames, _ in scored])
        results: List[CameraResult] = []
        for index, (camera, frames, estimate) in enumerate(scored):
            taken = camera in update.accepted_cameras
            own = dataclasses.replace(update, accepted=taken)
            if index < len(scored) - 1:
                own = dataclasses.replace(own, events=(), step=None)
            results.append(CameraResult(camera, estimate, own, len(frames),
                                        update.step if taken else None))
        return StepReport(tuple(results), answers)

    def _second_opinion(self, episode_id: Optional[str], instruction: str, generation: int,
                        windows: List[List[Frame]]) -> Tuple[MonitorUpdate, ...]:
        """Ask the verifier about the windows a held decision was made on; its answer as an update.

        Asked outside the lock, like the model: services and frames go on meanwhile. An answer
        for a stage or episode that changed in between (an operator decided) is not applied.
        """
        if episode_id is None:
            return ()
        if self.verifier is None:  # a monitor with verify_* set but no model to ask
            reading = VerifierReading(None, 0.0, "none", "no verifier model is loaded")
        else:
            reading = self.verifier.ask(instruction, windows)
        with self._lock:
            if generation != self._generation:
                return ()
            update = self.monitor.verifier_answer(episode_id, reading.value, reading.latency_s,
                                                  reading.backend, reading.error)
            self._follow(update)
        return (update,) if update.events or update.step is not None else ()

    def query_now(self) -> ProgressQuery:
        """Score the newest window of every camera now, outside the periodic steps.

        The monitor is not fed: no reward, decision or event comes of it. Call it under the same
        lock as ``step`` (the model is not re-entrant). A backend with per-stage state (TOPReward's
        running normaliser) sees the query as one more observation of the stage.
        Raises RuntimeError when no episode runs or no frame of the stage has come yet.
        """
        with self._lock:
            if not self.monitor.running:
                raise RuntimeError("no episode is running")
            reset, self._model_reset_due = self._model_reset_due, False
            state = self.monitor.state
            trend, stalled = self.monitor.stage_trend()
            batch = [(camera, window.snapshot()) for camera, window in self.windows.items()]
        if reset:
            self.model.reset()
        batch = [(c, f) for c, f in batch if len(f) >= max(1, self.window_config.min_frames)]
        if not batch:
            raise RuntimeError("no frame of the current stage has arrived yet")
        scored = [estimate for _, _, estimate in self._score(state.instruction, batch)]
        successes = [e.last_success_prob for e in scored if e.last_success_prob is not None]
        return ProgressQuery(
            state=state, progress=sum(e.last_progress for e in scored) / len(scored),
            success_prob=sum(successes) / len(successes) if successes else None,
            stamp=max(e.stamp for e in scored), trend_per_sec=trend, stalled=stalled)

    def _score(self, instruction: str, batch) -> List[Tuple[str, List[Frame], RewardEstimate]]:
        """All cameras in one forward when the backend can batch them, else one by one."""
        if len(batch) > 1 and self.model.batches_clips:
            started = time.perf_counter()
            outputs = self.model.score_batch(instruction, [frames for _, frames in batch])
            latencies = [time.perf_counter() - started] * len(batch)
        else:
            outputs, latencies = [], []
            for _, frames in batch:
                started = time.perf_counter()
                outputs.append(self.model.score(instruction, frames))
                latencies.append(time.perf_counter() - started)
        return [(camera, frames, RewardEstimate(
            stamp=frames[-1].stamp, camera=camera, progress=output.progress,
            frame_stamps=output.stamps, success_prob=output.success, backend=output.backend,
            latency_s=latency))
            for (camera, frames), output, latency in zip(batch, outputs, latencies)]

    def _remove_frames_the_model_fails_on(self, instruction: str, batch) -> str:
        """Find the frames a persistent failure comes from (every window holding one fails) and take them out.

        Each frame is scored alone; those that fail while others pass leave the window. When every
        frame fails alone, the fault is not a frame's (out of memory, a broken model): none is removed.
        """
        removed = []
        for camera, frames in batch:
            if len(frames) < 2:
                continue  # one frame failing alone says nothing that the step did not
            failing = []
            for frame in frames:
                try:
                    self.model.score(instruction, [frame])
                except Exception as exc:  # the frame's own failure, as the model reports it
                    failing.append((frame, f"{type(exc).__name__}: {exc}"))
            if failing and len(failing) < len(frames):
                self.windows[camera].discard([frame for frame, _ in failing])
                removed.append(f"camera {camera}: frame(s) stamped "
                               f"{', '.join(f'{f.stamp:.3f}' for f, _ in failing)} s removed from the "
                               f"window, the model fails on them alone ({failing[0][1]})")
        return "; ".join(removed)

    def _failed(self, stamp: float, camera: str, exc: Exception) -> StepReport:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        with self._lock:
            updates: Tuple[MonitorUpdate, ...] = ()
            if self.errors.failed(self._clock()):
                updates = (self.monitor.report_model_error(
                    stamp, f"{self.errors.consecutive} consecutive failures, last: {error}",
                    camera),)
        return StepReport((), updates, error)

    def _follow(self, update: MonitorUpdate) -> None:
        for event in update.events:
            if isinstance(event, StageAdvanced):
                # Frames of the finished stage must not reach the next stage's model input.
                self._restart_windows(event.window_start_stamp, include_start=False)

    # --- the operator (executor thread) ---------------------------------------------------------
    def operator_verdict(self, stamp: Optional[float], verdict, source: str, reason: str = "",
                         episode_id: str = "", stage_number: int = 0) -> OperatorAnswer:
        """Apply an operator's verdict (``TaskMonitor.operator_verdict``); a stage it ends drops its frames."""
        with self._lock:
            answer = self.monitor.operator_verdict(self._now(stamp), verdict, source, reason,
                                                   episode_id, stage_number)
            self._follow(answer.update)
            return answer

    def set_intervention(self, stamp: Optional[float], active: bool, source: str,
                         reason: str = "") -> OperatorAnswer:
        with self._lock:
            return self.monitor.set_intervention(self._now(stamp), active, source, reason)

    def dismiss_alert(self, stamp: Optional[float], episode_id: str, kind: int, source: str,
                      reason: str = "") -> OperatorAnswer:
        with self._lock:
            return self.monitor.dismiss_alert(self._now(stamp), episode_id, kind, source, reason)

    def reset_done(self, stamp: Optional[float], source: str, reason: str = "") -> OperatorAnswer:
        """Record that the scene was reset; start the next episode of the task when the rules say so."""
        with self._lock:
            answer = self.monitor.reset_done(self._now(stamp), source, reason)
            if not (answer.accepted and self.monitor.config.start_after_reset_done):
                return answer
            started = self._start(stamp, None)
            episode_id = self._pending_episode[0] if started is None else self.monitor.state.episode_id
            return dataclasses.replace(answer, update=started or answer.update,
                                       next_episode_id=episode_id)

    def _now(self, stamp: Optional[float]) -> float:
        return self.monitor.state.stamp if stamp is None else stamp

    # --- time and health (executor thread) ------------------------------------------------------
    def tick(self, stamp: float) -> MonitorUpdate:
        with self._lock:
            return self.monitor.tick(stamp)

    def report_camera_stale(self, camera: str, stamp: float, age_sec: float,
                            refused: str = "") -> MonitorUpdate:
        with self._lock:
            return self.monitor.report_camera_stale(camera, stamp, age_sec, refused)

    def close(self) -> None:
        with self._lock:
            self.monitor.close()


def finite_or_nan(value: Optional[float]) -> float:
    """Message fields have no None: unknown numbers travel as NaN."""
    return float("nan") if value is None or not math.isfinite(value) else float(value)
