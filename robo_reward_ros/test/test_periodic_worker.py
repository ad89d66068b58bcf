# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The inference thread: steps off the caller's thread, errors reported, clean stop."""
import threading

from robo_reward_ros.core.periodic_worker import PeriodicWorker


def test_steps_run_on_their_own_thread_and_stop_cleanly():
    ran_on = []
    enough = threading.Event()

    def step():
        ran_on.append(threading.current_thread().name)
        if len(ran_on) >= 3:
            enough.set()

    worker = PeriodicWorker(200.0, step, on_error=lambda exc: None)
    worker.start()
    assert enough.wait(10.0)
    assert worker.stop(timeout=10.0)
    assert not worker.running
    assert set(ran_on) == {"reward-inference"} and threading.current_thread().name not in ran_on


def test_a_failing_step_is_reported_and_the_loop_goes_on():
    errors, calls = [], []
    recovered = threading.Event()

    def step():
        calls.append(1)
        if len(calls) <= 2:
            raise RuntimeError("CUDA out of memory (simulated)")
        recovered.set()

    worker = PeriodicWorker(500.0, step, on_error=errors.append)
    worker.start()
    assert recovered.wait(10.0)
    worker.stop()
    assert [str(e) for e in errors[:2]] == ["CUDA out of memory (simulated)"] * 2


def test_slow_steps_never_queue():
    import time
    period, slow_steps, fast_steps = 0.002, 5, 10
    enough = threading.Event()
    starts = []

    def step():  # five steps of a "model" 10x slower than the rate, then fast ones
        starts.append(time.monotonic())
        if len(starts) <= slow_steps:
            enough.wait(10 * period)
        elif len(starts) >= slow_steps + fast_steps:
            enough.set()

    worker = PeriodicWorker(1.0 / period, step, on_error=lambda exc: None)
    worker.start()
    assert enough.wait(10.0)
    worker.stop()
    assert worker.overruns >= slow_steps - 1
    # No backlog: after the slow steps the loop keeps its period instead of firing the ~45
    # missed steps back to back (a catch-up burst would start them microseconds apart).
    fast_gaps = sorted(b - a for a, b in zip(starts[slow_steps:], starts[slow_steps + 1:]))
    assert fast_gaps[len(fast_gaps) // 2] >= period / 2


def test_an_on_time_step_starts_when_new_input_arrives():
    ran = threading.Event()
    worker = PeriodicWorker(10.0, ran.set, on_error=lambda exc: None, align_to_input_sec=30.0)
    worker.start()
    assert not ran.wait(0.3)  # no new frame yet: the step waits for one (up to 30 s here)
    worker.notify()
    assert ran.wait(10.0)
    worker.waiting_for_input.clear()
    assert worker.waiting_for_input.wait(10.0)  # waiting for the next frame again...
    assert worker.stop(timeout=10.0)  # ...and stop() ends that wait at once
