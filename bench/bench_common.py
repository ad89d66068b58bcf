# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the benchmarks: import path, tables, JSON, percentiles, machine description."""
import json
import os
import platform
import statistics
import sys
from typing import Any, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PACKAGE_ROOT = os.path.join(REPO, "robo_reward_ros")


def use_source_tree() -> None:
    """Import ``robo_reward_ros`` from this checkout (not an older installed copy); no progress bars."""
    if PACKAGE_ROOT not in sys.path:
        sys.path.insert(0, PACKAGE_ROOT)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging
        hf_logging.disable_progress_bar()
    except ImportError:
        pass


def percentile(values: Sequence[float], q: float) -> Optional[float]:
    """Nearest-rank percentile for q in [0, 100]; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, int(round(q / 100.0 * (len(ordered) - 1)))))
    return float(ordered[rank])


def summary_ms(values_s: Sequence[float]) -> Dict[str, Optional[float]]:
    """p50/p95/max/mean in milliseconds of values in seconds."""
    if not values_s:
        return {"n": 0, "p50_ms": None, "p95_ms": None, "max_ms": None, "mean_ms": None}
    ms = [v * 1000.0 for v in values_s]
    return {"n": len(ms), "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "max_ms": max(ms),
            "mean_ms": statistics.fmean(ms)}


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != 0.0 and (abs(value) < 10 ** -digits or abs(value) >= 1e6):
            return f"{value:.2e}"
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 2) -> str:
    """Render a GitHub-flavoured markdown table: it prints readably in a terminal too."""
    cells = [[fmt(v, digits) for v in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) if cells else len(str(h)) for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(str(h).ljust(w) for h, w in zip(headers, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for row in cells:
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    return "\n".join(lines)


def machine() -> Dict[str, Any]:
    """Describe what the figures ran on (shared machines: ratios matter, absolute times are context)."""
    info: Dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform(),
                            "cpu_count": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as handle:
            info["mem_total_gb"] = round(int(handle.readline().split()[1]) / 1024 ** 2, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        import torch
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return info


def write_json(path: Optional[str], data: Dict[str, Any]) -> None:
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=True, default=str)
        handle.write("\n")


def rss_kb(pid: Optional[int] = None, field: str = "VmRSS") -> int:
    """Read a /proc/<pid>/status memory field in kB (0 when unreadable)."""
    path = f"/proc/{pid or 'self'}/status"
    try:
        with open(path) as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (from /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def list_of(values: List[float], digits: int = 4) -> List[float]:
    return [round(float(v), digits) for v in values]


def stop_node_process(process, log) -> None:
    """Stop a benchmark's reward node as Ctrl-C would (SIGINT), killing it after 20 s; close its log."""
    import subprocess
    process.send_signal(2)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()
