# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The reward loop without ROS: windows, a backend through its public interface, the monitor."""
import dataclasses
import threading

import pytest

from robo_reward_ros.core.events import (EpisodeEnded, FailureDetected, FailureKind,
                                         StageAdvanced, TaskStatus)
from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.frame_intake import ManualClock
from robo_reward_ros.core.frame_window import FrameRejected
from robo_reward_ros.core.reward_pipeline import (ModelErrorPolicy, RewardPipeline,
                                                  WindowConfig)
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task
from robo_reward_ros.models.loading.loader import load_reward_model
from scripted_backend import PixelScriptedBackend, painted

CONFIG = MonitorConfig(success_k=2, success_n=3, episode_timeout_s=60.0)


def make(cameras=("front",), config=CONFIG, errors=None, clock=None):
    model = PixelScriptedBackend()
    pipeline = RewardPipeline(model, TaskMonitor(config), cameras,
                              WindowConfig(max_frames=8, min_interval_sec=0.0),
                              errors=errors, clock=clock or ManualClock())
    return pipeline, model


def feed(pipeline, stamp, progress, success, camera="front"):
    pipeline.add_frame(camera, Frame(stamp, painted(progress, success)))
    return pipeline.step()


def events(report):
    return [e for r in report.results for e in r.update.events] + [
        e for u in report.updates for e in u.events]


def test_registered_backend_is_created_by_name():
    model = load_reward_model("", backend="pixel_scripted", precision="fp32", device="cpu")
    assert isinstance(model, PixelScriptedBackend)


def test_two_stage_task_advances_and_the_next_stage_sees_only_its_own_frames():
    pipeline, model = make()
    pipeline.set_task(build_task(["open the drawer", "put the cup in it"]), 0.0, start=True)
    stamp, advanced = 0.0, None
    for stamp in (0.5, 1.0, 1.5, 2.0):
        report = feed(pipeline, stamp, 0.3 + stamp / 4, 0.9 if stamp >= 1.5 else 0.1)
        for event in events(report):
            if isinstance(event, StageAdvanced):
                advanced = event
    assert advanced is not None and advanced.window_start_stamp == 2.0
    assert advanced.instruction == "put the cup in it"
    assert pipeline.windows["front"].snapshot() == []  # the finished stage's frames are gone
    with pytest.raises(FrameRejected):  # the frame that finished stage 0 is not stage 1's
        pipeline.add_frame("front", Frame(2.0, painted(0.0, 0.0)))
    report = feed(pipeline, 2.5, 0.1, 0.0)
    assert model.seen[-1] == ("put the cup in it", [2.5])
    assert report.results[0].update.state.stage_index == 1
    ends = []
    for stamp in (3.0, 3.5, 4.0):
        ends += [e for e in events(feed(pipeline, stamp, 1.0, 1.0)) if isinstance(e, EpisodeEnded)]
    assert [e.status for e in ends] == [TaskStatus.SUCCEEDED] and ends[0].reset_requested
    assert pipeline.step().results == ()  # nothing is scored after the episode ended


def test_new_episode_starts_clean():
    pipeline, model = make()
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    feed(pipeline, 0.5, 0.6, 0.1)
    resets = model.resets
    updates = pipeline.start_episode(1.0, "trial-2", reason="operator reset")
    assert isinstance(updates[0].events[0], EpisodeEnded)
    assert updates[0].events[0].status is TaskStatus.IDLE
    assert pipeline.windows["front"].snapshot() == []
    assert model.resets == resets  # the scoring thread resets the model, before its next query
    pipeline.step()
    assert model.resets == resets + 1
    state = pipeline.state
    assert (state.episode_id, state.best_progress, state.stage_index) == ("trial-2", 0.0, 0)


def test_result_of_a_stage_that_ended_while_scoring_is_dropped():
    pipeline, model = make()
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    pipeline.add_frame("front", Frame(0.5, painted(0.5, 0.1)))
    inside, release = threading.Event(), threading.Event()
    original = model.score

    def slow_score(instruction, frames):
        inside.set()
        release.wait(10.0)
        return original(instruction, frames)

    model.score = slow_score
    reports = []
    worker = threading.Thread(target=lambda: reports.append(pipeline.step()))
    worker.start()
    assert inside.wait(10.0)
    pipeline.start_episode(0.6, "next")  # the operator resets while the model runs
    release.set()
    worker.join(10.0)
    assert reports[0].dropped == 1 and reports[0].results == ()
    assert pipeline.state.estimates_accepted == 0 and pipeline.state.episode_id == "next"


@pytest.mark.parametrize("fixture", ["topreward_fp32", "robometer_fp32"])
def test_a_task_change_during_a_query_never_resets_the_model_under_it(fixture, request,
                                                                      monkeypatch):
    """Check that a task change during a query waits for the scoring thread before the reset.

    Real stateful backends (TOPReward's causal normaliser, Robometer's vision cache): the task
    changes on another thread while a query runs. The next episode starts from clean model state.
    """
    from model_fixtures import make_frames
    model = request.getfixturevalue(fixture)
    model.reset()
    pipeline = RewardPipeline(model, TaskMonitor(CONFIG), ("front",),
                              WindowConfig(max_frames=8, min_interval_sec=0.0))
    old, new = make_frames(2, 64, 64, seed=11), make_frames(1, 64, 64, seed=12)
    in_query, release, resets_during_query = threading.Event(), threading.Event(), []
    score, reset = model.score, model.reset

    def slow_score(instruction, frames):
        in_query.set()
        release.wait(10.0)
        try:
            return score(instruction, frames)
        finally:
            in_query.clear()

    def watched_reset():
        if in_query.is_set():
            resets_during_query.append(threading.current_thread().name)
        reset()

    monkeypatch.setattr(model, "score", slow_score)
    monkeypatch.setattr(model, "reset", watched_reset)
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    for index, frame in enumerate(old):
        pipeline.add_frame("front", Frame(0.5 + 0.1 * index, frame.rgb))
    reports = []
    worker = threading.Thread(target=lambda: reports.append(pipeline.step()), name="inference")
    worker.start()
    assert in_query.wait(10.0)
    pipeline.set_task(build_task(["open the drawer"]), 0.7, start=True)  # the executor's call
    release.set()
    worker.join(10.0)
    assert resets_during_query == []
    assert reports[0].dropped == 1 and reports[0].error == ""
    pipeline.add_frame("front", Frame(0.8, new[0].rgb))
    first = pipeline.step()
    assert first.error == "" and len(first.results) == 1
    if fixture == "topreward_fp32":
        # Only the new episode's log-probability is in the normaliser: it starts at 0.
        assert model.normaliser.low == model.normaliser.high
        assert first.results[0].estimate.last_progress == 0.0
    else:
        assert len(model.vision_cache) == 1  # the new frame's block only


def test_model_failures_back_off_and_become_one_model_error_event():
    clock = ManualClock()
    pipeline, model = make(errors=ModelErrorPolicy(report_after=2, base_backoff_sec=1.0),
                           clock=clock)
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    model.fail_next = 3
    pipeline.add_frame("front", Frame(0.5, painted(0.5, 0.1)))
    first = pipeline.step()
    assert "CUDA out of memory" in first.error and not events(first)
    assert pipeline.step().error == ""  # backing off: not even tried
    clock.now = 1.0
    second = pipeline.step()
    kinds = [e.kind for e in events(second) if isinstance(e, FailureDetected)]
    assert kinds == [FailureKind.MODEL_ERROR]
    assert not events(second)[0].task_failure and pipeline.state.status is TaskStatus.RUNNING
    clock.now = 3.0
    third = pipeline.step()
    assert third.error and not events(third)  # reported once, not per failure
    clock.now = 10.0
    recovered = pipeline.step()
    assert recovered.error == "" and len(recovered.results) == 1


def test_non_finite_output_is_a_model_error_not_an_estimate():
    clock = ManualClock()
    pipeline, model = make(errors=ModelErrorPolicy(report_after=1), clock=clock)
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    original = model.score

    def nan_score(instruction, frames):
        output = original(instruction, frames)
        output.progress[-1] = float("nan")
        return output

    model.score = nan_score
    report = feed(pipeline, 0.5, 0.5, 0.1)
    assert "non-finite" in report.error
    assert [e.kind for e in events(report)] == [FailureKind.MODEL_ERROR]


def test_two_cameras_combine_by_majority():
    config = dataclasses.replace(CONFIG, cameras=("front", "wrist"), camera_rule="all")
    pipeline, _ = make(("front", "wrist"), config=config)
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    for stamp in (0.5, 1.0, 1.5):
        pipeline.add_frame("front", Frame(stamp, painted(0.9, 0.95)))
        pipeline.add_frame("wrist", Frame(stamp, painted(0.4, 0.2)))
        report = pipeline.step()
        assert [r.camera for r in report.results] == ["front", "wrist"]
    assert pipeline.state.status is TaskStatus.RUNNING  # "all": the wrist camera disagrees
    for stamp in (2.0, 2.5):
        pipeline.add_frame("front", Frame(stamp, painted(0.9, 0.95)))
        pipeline.add_frame("wrist", Frame(stamp, painted(0.9, 0.95)))
        pipeline.step()
    assert pipeline.state.status is TaskStatus.SUCCEEDED


def test_an_unchanged_window_is_not_scored_again():
    pipeline, model = make()
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    assert len(feed(pipeline, 0.5, 0.3, 0.1).results) == 1
    calls = len(model.seen)
    assert pipeline.step().results == () and len(model.seen) == calls  # camera silent
    assert len(feed(pipeline, 0.6, 0.3, 0.1).results) == 1  # a new frame is scored


def test_cameras_go_through_one_batched_forward_when_the_backend_batches():
    class Batching(PixelScriptedBackend):
        batches_clips = True

        def __init__(self):
            super().__init__()
            self.batches = []

        def score_batch(self, instruction, clips):
            self.batches.append(len(clips))
            return [PixelScriptedBackend.score(self, instruction, clip) for clip in clips]

    model = Batching()
    pipeline = RewardPipeline(model, TaskMonitor(CONFIG), ("front", "wrist"),
                              WindowConfig(max_frames=8, min_interval_sec=0.0))
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    pipeline.add_frame("front", Frame(0.5, painted(0.3, 0.1)))
    pipeline.add_frame("wrist", Frame(0.5, painted(0.6, 0.1)))
    report = pipeline.step()
    assert model.batches == [2]
    assert {r.camera: round(r.estimate.last_progress, 2) for r in report.results} == {
        "front": 0.3, "wrist": 0.6}
    pipeline.add_frame("wrist", Frame(0.6, painted(0.6, 0.1)))
    pipeline.step()  # only the wrist window changed: a batch of one goes through score
    assert model.batches == [2]
