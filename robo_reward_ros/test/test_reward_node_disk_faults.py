# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episode logs on a full disk or in an unwritable directory, against the running node (issue 20).

Rewards, decisions, resets and every service answer go on; the failure is in /diagnostics, one
event and the node's log; the log resumes when space returns. The disk is filled for real: the
node process's RLIMIT_FSIZE is lowered from outside (``prlimit``), so every write that would grow a
file fails with EFBIG, as ENOSPC would on a full disk; raising it again is "space returned".
"""
import os
import resource

from robo_reward_msgs.msg import FailureEvent, TaskSpec, TaskState
from robo_reward_msgs.srv import SetTask, StartEpisode
from robo_reward_msgs.msg import StageSpec

from robo_reward_ros.core.best_effort_log import incomplete_episode_logs
from robo_reward_ros.core.episode_log import episode_log_path, read_episode_log
from ros_fixtures import SCRIPTED_ENV, reward_node_argv, spin_until
from test_reward_node import Listener, call
from test_reward_node_faults import Camera, spin_publishing


def _diagnostic_level(listen, name_part):
    for array in reversed(listen.diagnostics):
        for status in array.status:
            if name_part in status.name:
                return ord(status.level) if isinstance(status.level, bytes) else status.level, \
                    status.message
    return None, ""


def test_a_full_disk_keeps_rewards_resets_and_services_going_and_the_log_resumes(
        ros_node, spawn, tmp_path):
    log_dir = str(tmp_path / "episodes")
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  "failure.low_progress_grace_sec:=100.0",
                                  log_dir=log_dir), env=SCRIPTED_ENV)
    processes = [node]
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    start = ros_node.create_client(StartEpisode, "/reward_node/start_episode")
    set_task = ros_node.create_client(SetTask, "/reward_node/set_task")
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.3)),
                    lambda: listen.estimates, "a first estimate", node)
    spin_until(ros_node, start.service_is_ready, what="start_episode", processes=processes)
    spin_until(ros_node, set_task.service_is_ready, what="set_task", processes=processes)
    limits = resource.prlimit(node.popen.pid, resource.RLIMIT_FSIZE)
    resource.prlimit(node.popen.pid, resource.RLIMIT_FSIZE, (1, limits[1]))  # the disk is full
    try:
        reply = call(ros_node, start, StartEpisode.Request(episode_id="on-a-full-disk"), processes)
        assert reply.success and reply.episode_id == "on-a-full-disk", reply.message
        spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.4)),
                        lambda: any(e.episode_id == "on-a-full-disk" for e in listen.estimates),
                        "rewards with the disk full", node)
        spin_until(ros_node, lambda: any(f.kind == FailureEvent.KIND_EPISODE_LOG_ERROR
                                         for f in listen.failures),
                   what="the episode-log error event", processes=processes)
        event = [f for f in listen.failures if f.kind == FailureEvent.KIND_EPISODE_LOG_ERROR][0]
        assert "File too large" in event.description
        assert not event.task_failure and not event.terminal
        spin_until(ros_node, lambda: _diagnostic_level(listen, ": episode log")[0] == 2,
                   what="the episode log ERROR in diagnostics", processes=processes)
        # Success is still detected and the reset still requested.
        spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(0.95, 0.95)),
                        lambda: any(r.episode_id == "on-a-full-disk" for r in listen.resets),
                        "the reset request of the episode on a full disk", node)
        spin_until(ros_node, lambda: listen.states[-1].status == TaskState.STATUS_SUCCEEDED,
                   what="the succeeded task state", processes=processes)
        reply = call(ros_node, set_task, SetTask.Request(start_episode=True, task=TaskSpec(
            stages=[StageSpec(instruction="open the drawer")])), processes)
        assert reply.success, reply.message
        spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.2)),
                        lambda: any(e.episode_id == reply.episode_id for e in listen.estimates),
                        "rewards of the task set while the disk is full", node)
    finally:
        resource.prlimit(node.popen.pid, resource.RLIMIT_FSIZE, limits)  # space returns
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.25)),
                    lambda: _diagnostic_level(listen, ": episode log") == (
                        0, f"writing to {log_dir}"),
                    "the episode log to catch up", node)
    assert node.interrupt() == 0, node.output()
    # The error line went to the node's output file, on the same full "disk"; the resume did not.
    assert "episode log writing resumed" in node.output()
    records = read_episode_log(episode_log_path(log_dir, "on-a-full-disk"))
    types = [r["type"] for r in records]
    assert types[0] == "header" and types[-1] == "summary" and "EpisodeEnded" in types
    assert records[-1]["status_name"] == "SUCCEEDED"
    assert incomplete_episode_logs(log_dir) == []


def test_an_unwritable_log_directory_is_reported_at_configure_and_long_ids_are_refused(
        ros_node, spawn, tmp_path):
    blocked = tmp_path / "episodes"
    blocked.write_text("a file where the log directory should be")
    node = spawn(reward_node_argv("instruction:=stack the cups", "inference.rate_hz:=20.0",
                                  log_dir=str(blocked)), env=SCRIPTED_ENV)
    processes = [node]
    listen = Listener(ros_node)
    camera = Camera(ros_node)
    spin_until(ros_node, lambda: "not writable" in _diagnostic_level(listen, ": episode log")[1],
               what="the configure check in diagnostics", processes=processes)
    start = ros_node.create_client(StartEpisode, "/reward_node/start_episode")
    reply = call(ros_node, start, StartEpisode.Request(episode_id="x" * 300), processes)
    assert not reply.success and "300 characters; at most 256" in reply.message
    long_id = "trial-" + "y" * 250
    reply = call(ros_node, start, StartEpisode.Request(episode_id=long_id), processes)
    assert reply.success and reply.episode_id == long_id, reply.message
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.4)),
                    lambda: any(e.episode_id == long_id for e in listen.estimates),
                    "rewards of the long-id episode", node)
    spin_until(ros_node, lambda: any(f.kind == FailureEvent.KIND_EPISODE_LOG_ERROR
                                     for f in listen.failures),
               what="the episode-log error event", processes=processes)
    blocked.unlink()  # the operator fixes the directory: the waiting records are written
    path = episode_log_path(str(blocked), long_id)
    spin_publishing(ros_node, lambda: camera.pub.publish(camera.frame(progress=0.45)),
                    lambda: os.path.exists(path), "the log of the long-id episode", node)
    assert node.interrupt() == 0, node.output()
    assert "is not writable" in node.output()
    assert read_episode_log(path)[0]["episode_id"] == long_id
