# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What a test that timed out waiting on DDS prints, so an intermittent stall leaves evidence.

A stall seen once in CI cannot be rerun: the failure message has to say whether the other side was
discovered, by whom, and what the processes' threads were doing.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import traceback
from typing import Iterable, List

from proc_stat import stat_fields

# A fresh participant's view of the graph: if it sees the other process's endpoints and the test's
# participant does not, the test's own middleware state is stale, not the other process.
_OBSERVER = r"""
import sys, time, rclpy
rclpy.init()
node = rclpy.create_node("dds_evidence_observer")
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    rclpy.spin_once(node, timeout_sec=0.1)
names = sorted(f"{ns.rstrip('/')}/{n}" for n, ns in node.get_node_names_and_namespaces())
print("nodes:", ", ".join(names))
for topic, _ in sorted(node.get_topic_names_and_types()):
    print(f"  {topic}: {node.count_publishers(topic)} pub, {node.count_subscribers(topic)} sub")
"""


def deleted_shm_ports(pid: str = "self") -> List[str]:
    """Fast DDS shared-memory ports this process still maps although their file was removed."""
    try:
        with open(f"/proc/{pid}/maps") as maps:
            return sorted({line.split()[-2] for line in maps
                           if "fastdds_port" in line and line.rstrip().endswith("(deleted)")})
    except OSError:
        return []


def thread_states(pid: int) -> str:
    """One line per thread: name, state and the kernel function it waits in."""
    lines = []
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError:
        return "  (gone)"
    for tid in tids:
        try:
            state = stat_fields(f"/proc/{pid}/task/{tid}/stat")[0]
            with open(f"/proc/{pid}/task/{tid}/comm") as comm, \
                    open(f"/proc/{pid}/task/{tid}/wchan") as wchan:
                lines.append(f"  {tid} {comm.read().strip()} {state} {wchan.read().strip()}")
        except OSError:
            continue
    return "\n".join(lines)


def native_stacks(pid: int) -> str:
    """Return another process's native stacks (gdb, where installed): which lock a stuck DDS thread waits on."""
    if pid == os.getpid():
        raise ValueError("gdb on the test's own process can leave it stopped for good: use python_stacks")
    if shutil.which("gdb") is None:
        return "  (no gdb on PATH: no native stacks)"
    # A gdb ended while it held the process leaves it stopped: SIGCONT in every case.
    try:
        done = subprocess.run(["timeout", "-s", "KILL", "60", "gdb", "-p", str(pid), "-batch", "-nx",
                               "-iex", "set debuginfod enabled off",
                               "-ex", "set pagination off", "-ex", "thread apply all bt 12"],
                              capture_output=True, text=True, timeout=90.0)
    except subprocess.TimeoutExpired:
        return "  (gdb did not finish)"
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
    if done.returncode == -signal.SIGKILL:  # ended by timeout (it kills its own group with gdb)
        return "  (gdb did not finish in 60 s)"
    lines = [line for line in done.stdout.splitlines() if line.startswith(("Thread", "#"))]
    return "\n".join(lines) or done.stderr[-1000:]


def python_stacks() -> str:
    """Return this process's Python threads' stacks, innermost call last.

    Not gdb: it stops every thread of the process it attaches to, and one that hung there and was
    killed left a test worker stopped for good (CI then waited out its 90 minutes, 2026-12-07).
    """
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        calls = traceback.format_stack(frame, limit=12)
        parts.append(f"  Thread {names.get(ident, ident)}:\n" + "".join(calls).rstrip())
    return "\n".join(parts)


def graph_view(node) -> str:
    """Return the test participant's own view: nodes, and endpoint counts per topic."""
    names = sorted(f"{ns.rstrip('/')}/{n}" for n, ns in node.get_node_names_and_namespaces())
    topics = [f"  {topic}: {node.count_publishers(topic)} pub, {node.count_subscribers(topic)} sub"
              for topic, _ in sorted(node.get_topic_names_and_types())]
    return "nodes: " + ", ".join(names) + "\n" + "\n".join(topics)


def observer_view(seconds: float = 3.0) -> str:
    """Return a fresh process's view of the graph after it listened for a few seconds."""
    try:
        done = subprocess.run([sys.executable, "-c", _OBSERVER, str(seconds)], capture_output=True,
                              text=True, timeout=seconds + 30.0)
        return done.stdout + (done.stderr[-2000:] if done.returncode else "")
    except subprocess.TimeoutExpired:
        return "(the observer did not finish)"


def stall_report(node, pids: Iterable[int]) -> str:
    """Everything above, for the test's participant and the given processes."""
    parts = ["=== DDS evidence ===",
             f"test process {os.getpid()} maps removed shared-memory ports: {deleted_shm_ports()}",
             "--- the test participant's graph ---", graph_view(node),
             "--- a fresh participant's graph ---", observer_view(),
             f"--- threads of the test process {os.getpid()} ---", thread_states(os.getpid()),
             python_stacks()]
    for pid in pids:
        parts += [f"--- process {pid}: removed ports mapped {deleted_shm_ports(str(pid))} ---",
                  thread_states(pid), native_stacks(pid)]
    return "\n".join(parts)
