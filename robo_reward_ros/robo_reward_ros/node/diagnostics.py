# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward node's /diagnostics report: what an operator needs to trust (or distrust) the rewards.

Is the model loaded and how fast, is every camera delivering, what failed last.
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Deque, Dict, Iterable, List, Optional, Tuple

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR
# Frames lost on the way (seen from the publisher's stamps) above this fraction make a camera WARN.
LOSS_WARN_FRACTION = 0.1


class LatencyWindow:
    """Recent inference latencies (seconds) for p50/p95; safe to add from another thread."""

    def __init__(self, size: int = 200) -> None:
        self._values: Deque[float] = collections.deque(maxlen=size)
        self._lock = threading.Lock()

    def add(self, seconds: float) -> None:
        with self._lock:
            self._values.append(seconds)

    def percentiles(self) -> Optional[Dict[str, float]]:
        with self._lock:
            if not self._values:
                return None
            values = np.fromiter(self._values, dtype=float)
        p50, p95 = np.percentile(values, [50, 95])
        return {"p50": float(p50), "p95": float(p95), "max": float(values.max())}


def status(name: str, level: bytes, message: str, values: Dict[str, object],
           hardware_id: str = "") -> DiagnosticStatus:
    return DiagnosticStatus(
        level=level, name=name, message=message,
        hardware_id=hardware_id,
        values=[KeyValue(key=k, value=_text(v)) for k, v in values.items()])


def _text(value: object) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def camera_status(node_name: str, stats, now: float, rate_hz: float, window_fill: int,
                  window_capacity: int, stale_after_sec: float,
                  publishers: Optional[int] = None) -> DiagnosticStatus:
    age = stats.age(now)
    usable_age = stats.usable_age(now)
    loss = stats.gaps.recent_loss()
    period = stats.gaps.period()
    if stats.qos_incompatible:
        level, text = ERROR, stats.last_error
    elif stats.accepted == 0:
        level, text = WARN, ("no frame received yet" if stats.received == 0
                             else f"no usable frame yet: {stats.last_error}")
    elif age is not None and age > stale_after_sec:
        level, text = WARN, f"stale: no frame for {age:.1f} s"
    if not stats.qos_incompatible and (stats.received == 0
                                       or (age is not None and age > stale_after_sec)):
        text += _silent_publishers_hint(publishers)
    elif usable_age is not None and usable_age > stale_after_sec:
        level, text = WARN, f"no usable frame for {usable_age:.1f} s: {stats.unusable_reason()}"
    elif loss is not None and loss > LOSS_WARN_FRACTION:
        level, text = WARN, (f"receiving at {rate_hz:.1f} Hz; about {100 * loss:.0f}% of the frames "
                             f"the camera stamped (every {period:.3f} s) never arrived")
    else:
        level, text = OK, f"receiving at {rate_hz:.1f} Hz"
    return status(f"{node_name}: camera {stats.name}", level, text, {
        "topic": stats.topic,
        "transport": "compressed" if stats.compressed else "raw",
        "frames_received": stats.received,
        "frames_accepted": stats.accepted,
        "frames_rejected": stats.rejected,
        "frames_lost_in_transport": stats.lost,
        "frames_dropped": stats.rejected + stats.lost,
        "frames_missed_by_stamps": stats.gaps.missed,
        "recent_loss_by_stamps": loss,
        "publisher_period_sec": period,
        "input_rate_hz": rate_hz,
        "time_since_last_frame_sec": age,
        "time_since_last_usable_frame_sec": usable_age,
        "window_fill": f"{window_fill}/{window_capacity}",
        "qos_incompatible_events": stats.qos_incompatible,
        "publishers": publishers,
        "last_error": stats.last_error,
    }, hardware_id=stats.topic)


def _silent_publishers_hint(publishers: Optional[int]) -> str:
    """Name publishers that send nothing: what a node restarted after a crash meets."""
    if not publishers:
        return ""
    return (f" although {publishers} publisher(s) are on the topic; if they kept running while "
            "this node was killed and restarted, restart them (Fast DDS shared memory, "
            "docs/troubleshooting.md)")


class InputRates:
    """Frames per second per camera since the previous report."""

    def __init__(self) -> None:
        self._clock = time.monotonic()

    def rates(self, cameras: Iterable) -> Dict[str, float]:
        now = time.monotonic()
        elapsed = max(now - self._clock, 1e-6)
        self._clock = now
        rates = {}
        for stats in cameras:
            rates[stats.name] = (stats.received - stats.received_at_last_report) / elapsed
            stats.received_at_last_report = stats.received
        return rates


def unloaded_model_status(node_name: str, configure_error: str,
                          loading: Optional[Tuple[str, float]] = None) -> DiagnosticStatus:
    """Report why there is no model; ``loading`` is (what, seconds so far) while a configure loads it."""
    if loading is not None:
        what, seconds = loading
        return status(f"{node_name}: model", WARN, f"loading {what} ({seconds:.0f} s)",
                      {"loaded": False, "loading": what, "loading_for_sec": seconds})
    return status(f"{node_name}: model", ERROR if configure_error else WARN,
                  configure_error or "not loaded (node not configured)", {"loaded": False})


def model_status(node_name: str, model, settings, latency: LatencyWindow, worker, errors,
                 last_error: str, monitor_settings: str = "",
                 monitor_defaults_error: str = "", memory=None) -> DiagnosticStatus:
    """``errors``: the pipeline's ModelErrorPolicy; ``worker``: the inference thread or None.

    ``monitor_settings``: the model parameters' values and where each came from;
    ``monitor_defaults_error``: why the model's recommended settings were not used (a warning);
    ``memory``: both models' memory at configure (verifier_loading.MemoryReport) when a verifier runs.
    """
    percentiles = latency.percentiles() or {}
    level = ERROR if errors.consecutive else WARN if monitor_defaults_error else OK
    message = last_error or (f"loaded; {monitor_defaults_error}" if monitor_defaults_error else "loaded")
    return status(f"{node_name}: model", level, message, {
        "monitor_settings": monitor_settings,
        "monitor_defaults_error": monitor_defaults_error,
        "loaded": True,
        "backend": model.name,
        "model_id": settings.model.model_id,
        "device": model.device or settings.model.device,
        "precision": settings.model.precision,
        "inference_latency_p50_sec": percentiles.get("p50"),
        "inference_latency_p95_sec": percentiles.get("p95"),
        "inference_steps": worker.steps if worker else 0,
        "inference_overruns": worker.overruns if worker else 0,
        "model_errors_total": errors.total,
        "model_errors_consecutive": errors.consecutive,
        "last_error": last_error,
        "verifier": (f"{settings.verifier.backend} {settings.verifier.model_id} {settings.verifier.precision}"
                     if settings.verifier is not None else "none"),
        "memory": memory.describe() if memory is not None else "",
    })


def task_status(node_name: str, state, last_error: str,
                episode_log: Optional[str], budget=None) -> DiagnosticStatus:
    """``budget``: the task services' CallBudget (calls served and refused as busy), or None."""
    calls = {} if budget is None else {
        "service_calls_served": budget.served, "service_calls_refused_busy": budget.refused,
        "service_calls_refused_share": budget.refused / max(1, budget.served + budget.refused)}
    return status(f"{node_name}: task", OK if state.episode_id else WARN,
                  state.reason or state.status.name.lower(), {
                      "last_error": last_error,
                      "status": state.status.name.lower(),
                      "episode_id": state.episode_id,
                      "stage": f"{state.stage_index + 1}/{state.num_stages}",
                      "instruction": state.instruction,
                      "stage_progress": state.stage_progress,
                      "estimates_accepted": state.estimates_accepted,
                      "estimates_rejected": state.estimates_rejected,
                      "episode_log": episode_log,
                      **calls,
                  })


def episode_log_status(node_name: str, health, last_error: str) -> DiagnosticStatus:
    """``health``: the monitor's LogHealth, None when logging is off; ``last_error``: e.g. the configure check."""
    name = f"{node_name}: episode log"
    if health is None:
        return status(name, OK, "off (episode_log.directory is empty)", {})
    error = health.error or last_error
    if error:
        message = f"{error}; scoring goes on"
    elif health.pending_records:
        message = f"catching up: {health.pending_records} record(s) waiting"
    else:
        message = f"writing to {health.directory}"
    return status(name, ERROR if error else OK, message, {
        "directory": health.directory,
        "last_error": error,
        "failed_writes": health.failed_writes,
        "records_waiting": health.pending_records,
        "records_dropped": health.dropped_records,
        "logs_waiting": health.incomplete_logs,
    })


def reset_status(node_name: str, reset_client) -> DiagnosticStatus:
    stats = reset_client.stats
    return status(f"{node_name}: controller reset", WARN if stats.last_error else OK,
                  stats.last_error or "ok", {"service": reset_client.service, **vars(stats)})


def camera_statuses(node_name: str, intake, rates: Dict[str, float], stale_after_sec: float,
                    publishers: Dict[str, int]) -> List[DiagnosticStatus]:
    now = intake.clock()
    return [camera_status(node_name, stats, now, rates.get(stats.name, 0.0),
                          len(intake.pipeline.windows[stats.name]),
                          intake.pipeline.windows[stats.name].max_frames, stale_after_sec,
                          publishers.get(stats.topic))
            for stats in intake.stats.values()]
