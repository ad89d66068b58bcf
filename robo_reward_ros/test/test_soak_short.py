# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The soak in short form (the full run: python bench/soak.py --minutes 30).

A 30 Hz camera with bad frames, task changes, a flapping controller, a real tiny model; nothing
crashes.
"""
import os
import sys

from ros_fixtures import PACKAGE_ROOT

sys.path.insert(0, os.path.join(os.path.dirname(PACKAGE_ROOT), "bench"))
import soak  # noqa: E402


def test_short_soak_runs_clean(tiny_robometer_dir):
    report = soak.run(soak.parse_args([
        "--minutes", "0.6", "--task-period", "8", "--flap-period", "3", "--sample-period", "2",
        "--bad-frame-rate", "0.05", "--model", tiny_robometer_dir]))
    soak.print_report(report)
    counts = report["counts"]
    assert not report["crashed"] and report["exit_code"] == 0 and report["tracebacks"] == 0
    assert counts["estimates"] > 0 and counts["tasks_set"] >= 3
    assert counts["bad_frames_sent"] > 0
    assert int(report["node_frames_rejected"]) > 0  # bad frames refused, not fatal
    assert counts["reset_calls"] >= 1  # episodes ended (time limit) and the controller was asked
    low, high = report["rss_kb_second_half_min_max"]
    assert high <= low * 1.05  # memory flat after warm-up
    threads = {s["threads"] for s in report["samples"][len(report["samples"]) // 2:]}
    assert len(threads) == 1  # no thread piling up
