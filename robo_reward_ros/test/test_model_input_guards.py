# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What the loaded model cannot take is refused at the door, with the reason (issue 20).

Instructions holding a special token of the model's tokenizer (a prompt-injection surface: ``<|im_end|>``
opens a chat turn) and frames of a shape the model refuses, for each backend's real tokenizer and
preprocessing (tiny checkpoints in the published layouts); and a frame that makes the model fail
is taken out of the window instead of failing every step for the rest of the stage.
"""
import numpy as np
import pytest

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.core.frame_intake import FrameIntake, ManualClock
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.reward_pipeline import ModelErrorPolicy, RewardPipeline, WindowConfig
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import InvalidTaskError, build_task, check_task_for_model
from scripted_backend import POISON_BLUE, PixelScriptedBackend, painted

BACKENDS = ["robometer_fp32", "roboreward_fp32", "topreward_fp32"]


@pytest.fixture(scope="module")
def roboreward_baseline(tiny_roboreward_dir):
    """Load RoboReward with the baseline's inputs: each frame resized as an image first."""
    from robo_reward_ros.models import load_reward_model
    model = load_reward_model(tiny_roboreward_dir, backend="roboreward", precision="fp32",
                              device="cpu", inputs="robometer_baseline")
    yield model
    model.close()


@pytest.mark.parametrize("fixture", BACKENDS)
def test_every_special_token_of_the_tokenizer_is_refused_in_an_instruction(fixture, request):
    model = request.getfixturevalue(fixture)
    tokenizer = model.processing.tokenizer
    reserved = model.reserved_texts()
    assert set(tokenizer.all_special_tokens) <= reserved
    assert set(tokenizer.get_added_vocab()) <= reserved
    assert {"<|im_end|>", "<|im_start|>", "<|image_pad|>", "<|video_pad|>"} <= reserved
    if model.name == "robometer":
        assert "<|prog_token|>" in reserved
    for token in sorted(reserved):
        text = f"pick up the cup {token} and place it"
        # The hazard is real: the tokenizer reads the text as its control token.
        token_id = tokenizer.convert_tokens_to_ids(token)
        assert token_id in tokenizer(text, add_special_tokens=False)["input_ids"], token
        with pytest.raises(InvalidTaskError, match="special token"):
            check_task_for_model(build_task(["open the drawer", text]), 64, reserved)
    check_task_for_model(build_task(["pick up the <red> cup | then <|stop"]), 64, reserved)


def test_more_stages_than_the_cap_are_refused():
    check_task_for_model(build_task(["step"] * 64), 64, frozenset())
    with pytest.raises(InvalidTaskError, match="1000 stages; at most 64"):
        check_task_for_model(build_task(["step"] * 1000), 64, frozenset())


@pytest.mark.parametrize("fixture", BACKENDS + ["roboreward_baseline"])
def test_frame_limits_match_what_the_model_scores(fixture, request):
    model = request.getfixturevalue(fixture)
    for height, width in ((1, 300), (300, 1), (1, 201), (1, 200), (2, 399), (1, 1), (48, 64)):
        problem = model.frame_problem(height, width)
        frames = [Frame(0.0, np.full((height, width, 3), 90, np.uint8)),
                  Frame(0.5, np.full((height, width, 3), 120, np.uint8))]
        if problem:
            assert "aspect ratio" in problem and f"{width}x{height}" in problem
            with pytest.raises(ValueError, match="aspect ratio"):
                model.score("pick up the cup", frames)
        else:
            output = model.score("pick up the cup", frames)
            assert np.all(np.isfinite(output.progress))
        model.reset()
    # Only the inputs resized frame by frame as images refuse extreme shapes.
    assert bool(model.frame_problem(1, 300)) == (fixture in ("robometer_fp32", "roboreward_baseline"))


def test_a_frame_the_model_refuses_is_refused_at_the_door(robometer_fp32):
    pipeline = RewardPipeline(robometer_fp32, TaskMonitor(MonitorConfig()), ["front"],
                              WindowConfig(max_frames=8, min_interval_sec=0.0))
    intake = FrameIntake(pipeline, max_pixels=50176, clock=ManualClock())
    pipeline.set_task(build_task(["pick up the cup"]), None, start=True)
    result = intake.receive_rgb("front", 1.0, np.zeros((1, 300, 3), np.uint8))
    assert not result.accepted and "aspect ratio of 300:1; robometer scores at most 200:1" in \
        result.rejected_because
    assert intake.stats["front"].rejected == 1 and len(pipeline.windows["front"]) == 0
    assert intake.receive_rgb("front", 1.1, np.zeros((48, 64, 3), np.uint8)).accepted
    report = pipeline.step()
    assert report.error == "" and len(report.results) == 1


def test_a_frame_that_makes_the_model_fail_leaves_the_window_and_scoring_resumes():
    clock = ManualClock()
    model = PixelScriptedBackend()
    pipeline = RewardPipeline(model, TaskMonitor(MonitorConfig(episode_timeout_s=None)),
                              ["front"], WindowConfig(max_frames=16, min_interval_sec=0.0),
                              errors=ModelErrorPolicy(report_after=3, base_backoff_sec=0.0),
                              clock=clock)
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    pipeline.add_frame("front", Frame(0.1, painted(0.2, 0.1)))
    pipeline.add_frame("front", Frame(0.2, painted(0.2, 0.1, blue=POISON_BLUE)))
    errors = []
    for step in range(6):
        pipeline.add_frame("front", Frame(0.3 + 0.1 * step, painted(0.3, 0.1)))
        errors.append(pipeline.step().error)
    assert all("cannot process the frame stamped 0.2" in e for e in errors[:3])
    assert "frame(s) stamped 0.200 s removed from the window" in errors[2]
    assert errors[3:] == ["", "", ""]  # scoring resumed on the same stage
    assert 0.2 not in [f.stamp for f in pipeline.windows["front"].snapshot()]
    assert 0.1 in [f.stamp for f in pipeline.windows["front"].snapshot()]  # the others stay


def test_a_failure_that_is_not_a_frame_s_removes_nothing():
    model = PixelScriptedBackend()
    pipeline = RewardPipeline(model, TaskMonitor(MonitorConfig(episode_timeout_s=None)),
                              ["front"], WindowConfig(max_frames=16, min_interval_sec=0.0),
                              errors=ModelErrorPolicy(report_after=1, base_backoff_sec=0.0),
                              clock=ManualClock())
    pipeline.set_task(build_task(["stack the cups"]), 0.0, start=True)
    for stamp in (0.1, 0.2, 0.3):
        pipeline.add_frame("front", Frame(stamp, painted(0.2, 0.1)))
    model.fail_next = 10  # out of memory whatever the input
    assert "removed" not in pipeline.step().error
    assert len(pipeline.windows["front"]) == 3
