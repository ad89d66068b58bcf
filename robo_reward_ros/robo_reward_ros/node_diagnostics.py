"""The reward node's /diagnostics report: what an operator needs to trust (or distrust) the
rewards: is the model loaded and how fast, is every camera delivering, what failed last."""
from __future__ import annotations

import collections
import threading
from typing import Deque, Dict, Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

OK, WARN, ERROR = DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR


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
                  window_capacity: int, stale_after_sec: float) -> DiagnosticStatus:
    age = stats.age(now)
    if stats.qos_incompatible:
        level, text = ERROR, stats.last_error
    elif stats.accepted == 0:
        level, text = WARN, ("no frame received yet" if stats.received == 0
                             else f"no usable frame yet: {stats.last_error}")
    elif age is not None and age > stale_after_sec:
        level, text = WARN, f"stale: no frame for {age:.1f} s"
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
        "input_rate_hz": rate_hz,
        "time_since_last_frame_sec": age,
        "window_fill": f"{window_fill}/{window_capacity}",
        "qos_incompatible_events": stats.qos_incompatible,
        "last_error": stats.last_error,
    }, hardware_id=stats.topic)

