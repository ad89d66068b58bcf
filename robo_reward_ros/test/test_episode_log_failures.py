# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A full disk or an unwritable log directory never stops the task monitor (issue 20).

The disk is filled for real: the writer runs in a child process whose RLIMIT_FSIZE is lowered
(every write past the limit fails with EFBIG, as ENOSPC would on a full disk) and raised again
("space returns"); an unwritable directory is a path where a file stands instead of a directory.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from monitor_traces import estimate
import robo_reward_ros
from robo_reward_ros.core.best_effort_log import (BestEffortEpisodeLog, check_log_directory,
                                                  incomplete_episode_logs)
from robo_reward_ros.core.episode_log import episode_log_path, read_episode_log
from robo_reward_ros.core.events import EpisodeEnded, FailureDetected, FailureKind
from robo_reward_ros.core.frame_intake import ManualClock
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(robo_reward_ros.__file__)))

# Two episodes, the disk full from the first record of the first until the middle of the second;
# prints what the monitor decided, so the parent can check scoring never stopped.
FILLING_DISK = textwrap.dedent("""
    import json, resource, sys
    from robo_reward_ros.core.events import RewardEstimate
    from robo_reward_ros.core.monitor_config import MonitorConfig
    from robo_reward_ros.core.task_monitor import TaskMonitor
    from robo_reward_ros.core.task_spec import build_task
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    def disk(full):
        resource.setrlimit(resource.RLIMIT_FSIZE, (40 if full else hard, hard))
    monitor = TaskMonitor(MonitorConfig(log_directory=sys.argv[1], episode_timeout_s=None))
    monitor._recorder.log._retry_after = 0.0  # retry at every tick: the test has no time to wait
    out = {"rewards": [], "events": [], "health": []}
    def record(update):
        out["events"] += [[type(e).__name__, getattr(e, "kind", 0) and e.kind.name]
                          for e in update.events]
        if update.reward is not None:
            out["rewards"].append(update.reward)
    disk(True)
    for episode in ("first", "second"):
        record(monitor.start_episode(build_task(["stack the cups"]), 0.0, episode))
        for i in range(1, 30):
            t = i * 0.1
            if episode == "second" and i == 10:
                disk(False)  # space returns mid-episode
            record(monitor.update(RewardEstimate(t, "cam0", [0.2 + 0.1 * (i > 20) * 8],
                                                 [t], [0.9 if i > 25 else 0.1])))
            record(monitor.tick(t))
            out["health"].append(monitor.log_health.error)
    monitor.close()
    print(json.dumps(out))
""")


def _run_child(script, directory):
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script, str(directory)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_full_disk_never_stops_scoring_and_the_log_resumes_when_space_returns(tmp_path):
    out = _run_child(FILLING_DISK, tmp_path)
    names = [name for name, _ in out["events"]]
    # Scoring and decisions went on with the disk full: rewards every step, success detected.
    assert len(out["rewards"]) == 2 * 27  # the episode succeeds at the 27th estimate
    assert names.count("EpisodeEnded") == 2 and names.count("StageSucceeded") == 2
    # One log error event per period the log could not be written (in the first episode only).
    assert [kind for name, kind in out["events"] if name == "FailureDetected"] == [
        "EPISODE_LOG_ERROR"]
    assert "File too large" in out["health"][0] and out["health"][-1] == ""
    # Both logs complete once space returned: every record in order, no torn line, a summary last.
    for episode in ("first", "second"):
        records = read_episode_log(episode_log_path(str(tmp_path), episode))
        types = [r["type"] for r in records]
        assert types[0] == "header" and types[-1] == "summary", types
        assert types.count("estimate") == 27
        assert types.count("EpisodeEnded") == 1
    assert incomplete_episode_logs(str(tmp_path)) == []


def test_a_disk_that_stays_full_leaves_logs_that_are_detectably_incomplete(tmp_path):
    script = FILLING_DISK.replace("disk(False)  # space returns mid-episode", "pass")
    out = _run_child(script, tmp_path)
    assert len(out["rewards"]) == 2 * 27 and out["health"][-1]
    incomplete = incomplete_episode_logs(str(tmp_path))
    assert sorted(os.path.basename(p) for p in incomplete) == ["episode_first.jsonl",
                                                               "episode_second.jsonl"]


def test_an_unwritable_directory_is_reported_and_the_log_appears_when_it_is_fixed(tmp_path):
    directory = tmp_path / "episodes"
    directory.write_text("a file where the log directory should be")
    assert "not writable" in check_log_directory(str(directory))
    monitor = TaskMonitor(MonitorConfig(log_directory=str(directory), episode_timeout_s=None))
    started = monitor.start_episode(build_task(["stack the cups"]), 0.0, "trial-1")
    assert started.events  # the episode runs although its log cannot be opened
    update = monitor.update(estimate(0.5, 0.4, 0.1))
    assert update.accepted and update.reward is not None
    events = monitor.tick(0.6).events
    assert [e.kind for e in events if isinstance(e, FailureDetected)] == [
        FailureKind.EPISODE_LOG_ERROR]
    assert not events[0].terminal and not events[0].kind.is_task_failure
    assert monitor.tick(0.7).events == ()  # once per failing period, not per tick
    assert "cannot write" in monitor.log_health.error and str(directory) in monitor.log_health.error
    directory.unlink()  # the operator fixes it
    monitor._recorder.log._retry_at = 0.0  # the next retry is due now (instead of in a second)
    monitor.tick(0.8)
    assert monitor.log_health.error == ""
    monitor.update(estimate(0.9, 0.5, 0.1))
    monitor.abort_episode(1.0, "test over")
    records = read_episode_log(monitor.log_path)
    assert [r["type"] for r in records][:2] == ["header", "EpisodeStarted"]
    assert [r["type"] for r in records].count("estimate") == 2
    assert any(r.get("kind_name") == "EPISODE_LOG_ERROR" for r in records)
    assert records[-1]["type"] == "summary"
    assert check_log_directory(str(directory)) == ""


def test_estimates_beyond_the_memory_bound_become_a_gap_record_events_are_kept(tmp_path):
    blocker = tmp_path / "episodes"
    blocker.write_text("")
    clock = ManualClock(0.0)
    log = BestEffortEpisodeLog(str(blocker), clock=clock, max_pending=5)
    log.open("bounded")
    log.write_event({"type": "header"})
    for i in range(20):
        log.write_estimate({"type": "estimate", "i": i})
    log.write_event({"type": "EpisodeEnded"})
    assert log.health.dropped_records == 16 and log.health.error
    blocker.unlink()
    clock.now = 5.0
    log.retry()
    log.close()
    records = read_episode_log(str(blocker / "episode_bounded.jsonl"))
    expected = ["header"] + ["estimate"] * 4 + ["log_gap", "EpisodeEnded"]
    assert [r["type"] for r in records] == expected
    assert records[5]["records_dropped"] == 16


def test_a_300_character_episode_id_gets_a_short_unique_file_name(tmp_path):
    long_a, long_b = "a" * 299 + "1", "a" * 299 + "2"
    monitor = TaskMonitor(MonitorConfig(log_directory=str(tmp_path), episode_timeout_s=None))
    monitor.start_episode(build_task(["stack the cups"]), 0.0, long_a)
    first = monitor.log_path
    monitor.start_episode(build_task(["stack the cups"]), 1.0, long_b)
    second = monitor.log_path
    monitor.close()
    assert first != second
    for path, episode_id in ((first, long_a), (second, long_b)):
        assert len(os.path.basename(path).encode()) <= 255
        assert read_episode_log(path)[0]["episode_id"] == episode_id  # the full id inside
    assert monitor.log_health.error == ""


@pytest.mark.parametrize("episode_id", ["../../etc/x", ".hidden", "a/b\\c", "..", "caf\u00e9"])
def test_episode_ids_map_to_names_inside_the_directory(tmp_path, episode_id):
    path = episode_log_path(str(tmp_path), episode_id)
    assert os.path.dirname(path) == str(tmp_path)
    assert os.path.basename(path).startswith("episode_")


def test_episode_end_is_decided_while_the_disk_is_full(tmp_path):
    """The ghost episode of issue 20: the summary could not be written, the episode never ended."""
    blocker = tmp_path / "episodes"
    blocker.write_text("")
    monitor = TaskMonitor(MonitorConfig(log_directory=str(blocker), episode_timeout_s=None))
    monitor.start_episode(build_task(["stack the cups"]), 0.0, "e")
    ends = [e for t in (0.1, 0.2, 0.3)
            for e in monitor.update(estimate(t, 0.95, 0.95)).events if isinstance(e, EpisodeEnded)]
    assert len(ends) == 1 and ends[0].reset_requested
    assert not monitor.running
    monitor.start_episode(build_task(["stack the cups"]), 1.0, "f")  # the next one starts
    assert monitor.update(estimate(1.1, 0.3, 0.1)).accepted


def test_a_dangling_symlink_where_the_next_log_goes_is_never_followed(tmp_path):
    """Issue 30 finding 7: creating the log followed a planted link and wrote its target."""
    target = tmp_path / "elsewhere.txt"
    os.symlink(target, episode_log_path(str(tmp_path), "trial-1"))  # planted before the episode
    monitor = TaskMonitor(MonitorConfig(log_directory=str(tmp_path), episode_timeout_s=None))
    monitor.start_episode(build_task(["stack the cups"]), 0.0, "trial-1")
    assert monitor.log_path.endswith("episode_trial-1.2.jsonl")  # skipped like an id given twice
    log = BestEffortEpisodeLog(str(tmp_path))
    raced = log.open("trial-2")
    os.symlink(target, raced)  # planted after the name was chosen, before the file is created
    log.write_event({"type": "header"})
    assert "cannot write" in log.health.error and raced in log.health.error
    log.close()
    monitor.close()
    assert not target.exists()
    assert read_episode_log(monitor.log_path)[0]["episode_id"] == "trial-1"


def test_a_log_directory_others_can_write_to_is_refused_and_reported_until_fixed(tmp_path):
    directory = tmp_path / "episodes"
    directory.mkdir()
    directory.chmod(0o777)
    assert "other users can write to it" in check_log_directory(str(directory))
    monitor = TaskMonitor(MonitorConfig(log_directory=str(directory), episode_timeout_s=None))
    monitor.start_episode(build_task(["stack the cups"]), 0.0, "trial-1")
    update = monitor.update(estimate(0.5, 0.4, 0.1))
    assert update.accepted and update.reward is not None  # scoring goes on
    events = monitor.tick(0.6).events
    assert [e.kind for e in events if isinstance(e, FailureDetected)] == [FailureKind.EPISODE_LOG_ERROR]
    assert "other users can write to it" in monitor.log_health.error
    assert os.listdir(directory) == []
    directory.chmod(0o750)  # the operator fixes it
    assert check_log_directory(str(directory)) == ""
    monitor._recorder.log._retry_at = 0.0
    monitor.tick(0.8)
    assert monitor.log_health.error == ""
    monitor.close()
    assert read_episode_log(monitor.log_path)[0]["type"] == "header"
