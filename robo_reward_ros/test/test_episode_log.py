# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The per-episode JSON Lines log: content, summary line, and durability against SIGKILL."""
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from monitor_traces import estimate, replay, trace
import robo_reward_ros
from robo_reward_ros.core import best_effort_log
from robo_reward_ros.core.best_effort_log import BestEffortEpisodeLog
from robo_reward_ros.core.episode_log import read_episode_log
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(robo_reward_ros.__file__)))

# The writer: feeds estimates forever, reports a model error every few estimates, and prints
# one line per record that the monitor has returned from (so it is already written).
WRITER = textwrap.dedent("""
    import json, sys
    from robo_reward_ros.core.events import RewardEstimate
    from robo_reward_ros.core.monitor_config import MonitorConfig
    from robo_reward_ros.core.task_monitor import TaskMonitor
    from robo_reward_ros.core.task_spec import build_task
    monitor = TaskMonitor(MonitorConfig(log_directory=sys.argv[1], episode_timeout_s=None,
                                        stall_window_s=1e9, low_progress_grace_s=1e9))
    def said(kind, stamp):
        print(json.dumps([kind, stamp]), flush=True)
    for event in monitor.start_episode(build_task(["stack the cups"]), 0.0,
                                       episode_id="killed").events:
        said(type(event).__name__, event.stamp)
    i = 0
    while True:
        i += 1
        t = i * 0.01
        monitor.update(RewardEstimate(t, "cam0", [0.3], [t], [0.1]))
        said("estimate", t)
        if i % 5 == 0:
            for event in monitor.report_model_error(t, "simulated failure %d" % i).events:
                said(event.kind.name, event.stamp)
""")


def test_sigkill_mid_episode_loses_no_event(tmp_path):
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], env=env,
                             stdout=subprocess.PIPE, text=True)
    reported = []
    try:
        for line in child.stdout:
            reported.append(tuple(json.loads(line)))
            if sum(1 for kind, _ in reported if kind == "MODEL_ERROR") >= 40:
                break
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    records = read_episode_log(str(tmp_path / "episode_killed.jsonl"))
    logged = {(r["type"] if r["type"] != "FailureDetected" else r["kind_name"], r["stamp"])
              for r in records if "stamp" in r}
    missing = [r for r in reported if r not in logged]
    assert missing == []
    events = [r for r in reported if r[0] != "estimate"]
    assert len(events) == 41  # EpisodeStarted + 40 model errors
    assert not any(r["type"] == "summary" for r in records)  # killed before the end
    # The writer kept going after its last report: the log holds at least what was reported.
    assert len(records) >= len(reported) + 1  # + the header


def test_log_contents_and_summary(tmp_path):
    monitor = TaskMonitor(MonitorConfig(log_directory=str(tmp_path)))
    monitor.start_episode(build_task(["open the drawer"]), 0.0,
                          episode_id="run 7/a")
    monitor.update(estimate(-1.0, 0.5, 0.5))  # before the episode: rejected, still logged
    replay(monitor, trace([0.5, 1.0, 1.5], [0.4, 0.7, 0.9], [0.1, 0.8, 0.9]))
    path = monitor.log_path
    assert os.path.basename(path) == "episode_run_7_a.jsonl"
    records = read_episode_log(path)
    assert [r["type"] for r in records] == [
        "header", "EpisodeStarted", "estimate", "estimate", "estimate", "estimate",
        "StageSucceeded", "EpisodeEnded", "summary"]
    assert records[0]["stages"] == [{"instruction": "open the drawer", "timeout_sec": None,
                                     "success_threshold": None}]
    assert records[0]["config"]["success_threshold"] == 0.65
    assert [r["accepted"] for r in records if r["type"] == "estimate"] == [False, True, True,
                                                                           True]
    assert records[7]["status_name"] == "SUCCEEDED" and records[7]["status"] == 3
    summary = records[-1]
    assert summary["status_name"] == "SUCCEEDED" and summary["stages_completed"] == 1
    assert summary["estimates_accepted"] == 3 and summary["estimates_rejected"] == 1
    # delta (the default): phi goes 0.7 -> 1.0 on the success step, plus the success bonus.
    assert summary["final_reward"] == pytest.approx(1.0 - 0.7 + 1.0)
    # Each episode has its own file; a second episode does not touch the first.
    monitor.start_episode(build_task(["close it"]), 5.0, episode_id="next")
    assert monitor.log_path != path
    assert len(read_episode_log(path)) == len(records)


def test_events_are_fsynced_and_estimates_only_on_request(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(best_effort_log.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    writer = BestEffortEpisodeLog(str(tmp_path))
    writer.open("e")
    writer.write_event({"type": "header"})  # creates the file (and syncs its directory)
    synced.clear()
    writer.write_estimate({"type": "estimate"})
    assert synced == []
    writer.write_event({"type": "FailureDetected"})
    assert len(synced) == 1
    durable = BestEffortEpisodeLog(str(tmp_path), fsync_estimates=True)
    durable.open("d")
    durable.write_event({"type": "header"})
    synced.clear()
    durable.write_estimate({"type": "estimate"})
    assert len(synced) == 1
    writer.close()
    durable.close()
    writer.write_event({"type": "late"})  # after close: nothing is written, nothing raises
    assert [r["type"] for r in read_episode_log(str(tmp_path / "episode_e.jsonl"))] == [
        "header", "estimate", "FailureDetected"]


def test_reader_skips_only_a_torn_last_line(tmp_path):
    path = tmp_path / "torn.jsonl"
    path.write_bytes(b'{"type":"header"}\n{"type":"EpisodeStarted"}\n{"type":"estim')
    assert [r["type"] for r in read_episode_log(str(path))] == ["header", "EpisodeStarted"]
    path.write_bytes(b'{"type":"header"}\n{"type":"Episo\n{"type":"estimate"}\n')
    with pytest.raises(ValueError, match="line 2"):
        read_episode_log(str(path))


def test_an_episode_id_given_twice_gets_a_new_log_file(tmp_path):
    from robo_reward_ros.core.monitor_config import MonitorConfig
    from robo_reward_ros.core.task_monitor import TaskMonitor
    from robo_reward_ros.core.task_spec import build_task

    monitor = TaskMonitor(MonitorConfig(log_directory=str(tmp_path)))
    monitor.start_episode(build_task(["stack the cups"]), 0.0, "trial-7")
    first = monitor.log_path
    monitor.start_episode(build_task(["stack the cups"]), 5.0, "trial-7")
    assert monitor.log_path != first and monitor.log_path.endswith("episode_trial-7.2.jsonl")
    monitor.close()
    assert read_episode_log(first)[0]["episode_id"] == "trial-7"
