# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A second opinion on the decisions the first model is unsure of, without ROS.

The first model (``pixel_scripted``) reads green as its success probability; the verifier
(``pixel_scripted_verifier``) reads blue, so each frame carries both answers. Decisions in the band
wait for the verifier, which confirms or vetoes them; decisions outside it never ask.
"""
import numpy as np
import pytest

from robo_reward_ros.core.events import (DecidedBy, DecisionPending, EpisodeEnded, FailureKind,
                                         StageSucceeded, TaskStatus, VerifierChecked)
from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.frame_intake import ManualClock
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.reward_pipeline import RewardPipeline, WindowConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task
from robo_reward_ros.core.verifier import Verifier, done_value
from robo_reward_ros.models.reward_model import ModelOutput
from scripted_backend import PixelScriptedBackend, PixelScriptedVerifier, painted

CONFIG = MonitorConfig(success_k=2, success_n=3, episode_timeout_s=60.0, verify_successes=True,
                       verifier_band=(0.5, 0.8), verifier_threshold=0.5)


def make(config=CONFIG, verifier=True):
    pipeline = RewardPipeline(PixelScriptedBackend(), TaskMonitor(config), ("front",),
                              WindowConfig(max_frames=8, min_interval_sec=0.0), clock=ManualClock(),
                              verifier=Verifier(PixelScriptedVerifier()) if verifier else None)
    pipeline.set_task(build_task(["open the drawer"]), 0.0, start=True)
    return pipeline


def feed(pipeline, stamp, progress, success, verifier_says=0.0):
    pipeline.add_frame("front", Frame(stamp, painted(progress, success, blue=int(round(verifier_says * 149)))))
    return pipeline.step()


def events(report):
    return [e for r in report.results for e in r.update.events] + [e for u in report.updates for e in u.events]


def steps(report):
    return [r.step for r in report.results if r.step is not None] + [u.step for u in report.updates if u.step]


def test_an_unsure_success_the_verifier_rejects_is_vetoed_and_the_stage_goes_on():
    pipeline = make()
    feed(pipeline, 0.5, 0.6, 0.7, verifier_says=0.1)
    report = feed(pipeline, 1.0, 0.7, 0.7, verifier_says=0.1)  # 2 of 3 votes at 0.7: in the band
    checked = [e for e in events(report) if isinstance(e, VerifierChecked)]
    assert len(checked) == 1 and not checked[0].confirmed and checked[0].success
    assert checked[0].model_value == pytest.approx(0.7, abs=0.01)
    assert checked[0].value == pytest.approx(0.1, abs=0.01) and checked[0].backend == "pixel_scripted_verifier"
    assert not any(isinstance(e, StageSucceeded) for e in events(report))
    state = pipeline.state
    assert state.status is TaskStatus.RUNNING and "vetoed by the verifier" in state.reason
    # The held step, then the step that carries the veto; neither ends anything.
    held, vetoed = steps(report)
    assert held.status is TaskStatus.PENDING and held.verifier is None
    assert vetoed.verifier == checked[0] and not (vetoed.terminated or vetoed.stage_succeeded)
    # The votes started over: one more in-band estimate is no decision yet.
    report = feed(pipeline, 1.5, 0.7, 0.7, verifier_says=0.1)
    assert not [e for e in events(report) if isinstance(e, (VerifierChecked, StageSucceeded))]


def test_an_unsure_success_the_verifier_confirms_ends_the_episode_decided_by_the_model():
    pipeline = make()
    feed(pipeline, 0.5, 0.6, 0.7, verifier_says=0.9)
    report = feed(pipeline, 1.0, 0.7, 0.7, verifier_says=0.9)
    checked = [e for e in events(report) if isinstance(e, VerifierChecked)]
    ended = [e for e in events(report) if isinstance(e, EpisodeEnded)]
    assert len(checked) == 1 and checked[0].confirmed
    assert ended and ended[0].status is TaskStatus.SUCCEEDED and ended[0].decided_by is DecidedBy.MODEL
    assert "confirmed by the verifier pixel_scripted_verifier: 0.90 >= 0.5" in ended[0].reason
    last = steps(report)[-1]
    assert last.terminated and last.stage_succeeded and last.verifier == checked[0]


def test_a_sure_success_never_asks_the_verifier():
    pipeline = make()
    feed(pipeline, 0.5, 0.6, 0.95, verifier_says=0.0)
    report = feed(pipeline, 1.0, 0.7, 0.95, verifier_says=0.0)  # 0.95 is over the band
    assert not [e for e in events(report) if isinstance(e, VerifierChecked)]
    assert pipeline.state.status is TaskStatus.SUCCEEDED
    assert pipeline.verifier.model.seen == []  # never asked


def test_a_confirmed_success_still_waits_for_the_operator_in_confirmation_mode():
    import dataclasses
    pipeline = make(dataclasses.replace(CONFIG, confirm_decisions=True))
    feed(pipeline, 0.5, 0.6, 0.7, verifier_says=0.9)
    report = feed(pipeline, 1.0, 0.7, 0.7, verifier_says=0.9)
    kinds = [type(e) for e in events(report)]
    assert VerifierChecked in kinds and DecisionPending in kinds and EpisodeEnded not in kinds
    pending = next(e for e in events(report) if isinstance(e, DecisionPending))
    assert "confirmed by the verifier" in pending.reason
    assert pipeline.state.status is TaskStatus.PENDING
    answer = pipeline.operator_verdict(None, "success", "alice")
    assert answer.accepted and pipeline.state.status is TaskStatus.SUCCEEDED
    assert pipeline.state.decided_by is DecidedBy.OPERATOR


def test_a_failed_verifier_leaves_the_first_models_decision_standing():
    pipeline = make()
    feed(pipeline, 0.5, 0.6, 0.7, verifier_says=0.1)
    pipeline.verifier.model.fail_next = 1  # the verifier's query raises (out of memory)
    report = feed(pipeline, 1.0, 0.7, 0.7, verifier_says=0.1)
    checked = next(e for e in events(report) if isinstance(e, VerifierChecked))
    assert checked.confirmed and checked.value is None and "CUDA out of memory" in checked.error
    assert pipeline.state.status is TaskStatus.SUCCEEDED


def test_a_terminal_failure_in_the_band_is_vetoed_when_the_verifier_sees_the_task_done():
    import dataclasses
    config = dataclasses.replace(CONFIG, verify_successes=False, verify_failures=True,
                                 terminal_failures=frozenset({FailureKind.STALL}), stall_window_s=2.0,
                                 stall_min_delta=0.05, low_progress_floor=0.0)
    pipeline = make(config)
    checked = []
    for i in range(12):  # progress stuck at 0.6 (in the band): a stall, terminal
        checked += [e for e in events(feed(pipeline, 0.5 * (i + 1), 0.6, 0.0, verifier_says=0.9))
                    if isinstance(e, VerifierChecked)]
        if checked:
            break
    assert checked and not checked[0].success and not checked[0].confirmed
    assert pipeline.state.status is TaskStatus.RUNNING and "vetoed by the verifier" in pipeline.state.reason


def test_without_a_verifier_model_the_decision_stands_and_says_why():
    pipeline = make(verifier=False)
    feed(pipeline, 0.5, 0.6, 0.7)
    report = feed(pipeline, 1.0, 0.7, 0.7)
    checked = next(e for e in events(report) if isinstance(e, VerifierChecked))
    assert checked.confirmed and "no verifier model is loaded" in checked.error
    assert pipeline.state.status is TaskStatus.SUCCEEDED


def test_the_band_and_threshold_are_checked():
    with pytest.raises(ValueError, match="verifier_band"):
        MonitorConfig(verifier_band=(0.8, 0.5))
    with pytest.raises(ValueError, match="verifier_band"):
        MonitorConfig(verifier_band=(0.5, 1.2))
    with pytest.raises(ValueError, match="verifier_threshold"):
        MonitorConfig(verifier_threshold=1.5)


def test_done_value_prefers_a_yes_no_answer_then_a_success_head_then_progress():
    stamps = [0.0, 1.0]
    assert done_value(ModelOutput([0.2, 0.3], stamps, "x", extras={"p_true": 0.8})) == pytest.approx(0.8)
    assert done_value(ModelOutput([0.2, 0.3], stamps, "x", success=[0.1, 0.6])) == pytest.approx(0.6)
    assert done_value(ModelOutput([0.2, 0.3], stamps, "x")) == pytest.approx(0.3)
    assert done_value(ModelOutput(np.array([0.2, 1.7]), stamps, "x")) == 1.0


def test_the_verifiers_memory_is_told_from_its_checkpoint_and_a_misfit_refused(
        tiny_roboreward_dir, roboreward_fp32):
    from robo_reward_ros.models.loading.loader import load_reward_model
    from robo_reward_ros.models.loading.memory_fit import (HEADROOM, checkpoint_parameters, fit_problem,
                                                           needed_bytes, resident_bytes)
    from robo_reward_ros.models.loading.verifier_loading import load_verifier
    from robo_reward_ros.settings.node_settings import ModelSettings
    stored = checkpoint_parameters(tiny_roboreward_dir)
    loaded = sum(p.numel() for p in roboreward_fp32.model.parameters())
    assert stored == loaded  # read from the safetensors headers, no weight loaded
    assert needed_bytes(tiny_roboreward_dir, "fp32") == int(stored * 4 * HEADROOM)
    assert needed_bytes(tiny_roboreward_dir, "nf4") < needed_bytes(tiny_roboreward_dir, "bf16")
    assert needed_bytes("/no/such/checkpoint", "fp32") is None
    need = needed_bytes(tiny_roboreward_dir, "fp32")
    problem = fit_problem("the verifier tiny (fp32)", need, need - 1, "cuda:0 (cudaMemGetInfo)", "the model (1 GiB)")
    assert "the verifier tiny (fp32) needs about" in problem and "success.verifier.precision" in problem
    assert fit_problem("v", need, need, "cuda:0", "m") == "" and fit_problem("v", None, 1, "cuda:0", "m") == ""
    spec = ModelSettings("roboreward", tiny_roboreward_dir, "fp32", "cpu", ())
    verifier, report = load_verifier(spec, roboreward_fp32, load_reward_model)
    try:
        assert report.verifier_bytes == resident_bytes(verifier) == resident_bytes(roboreward_fp32)
        assert report.verifier_need_bytes == need and report.free_bytes > need
        assert "fits" in report.describe() and report.device == "cpu"
    finally:
        verifier.close()
