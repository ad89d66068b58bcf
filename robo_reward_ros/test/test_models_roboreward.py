# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""RoboReward backend: prompt, score, and inputs equal to its references' (token ids and pixels)."""
import os
import re

import numpy as np
import pytest
import torch

from model_fixtures import make_frames
from robo_reward_ros.models.backends.roboreward import (
    PAIR_PROMPT, RUBRIC_PROMPT, expected_score, parse_score_answer, training_frame_indices)
from robo_reward_ros.models.reward_model import Frame
from roboreward_reference import (CASES, INSTRUCTION, case_frames, digest, level_sample, patches_to_levels,
                                  reference_available, reference_inputs)

RECORD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "roboreward_reference.npz")


def test_prompt_is_the_verbatim_rubric_after_the_video(roboreward_fp32):
    seq = roboreward_fp32.sequence("put the cup in the bowl", make_frames(4))
    text = roboreward_fp32.processing.tokenizer.decode(seq.input_ids).replace("<|video_pad|>", "")
    expected = ("<|im_start|>user\n<0.2 seconds><|vision_start|><|vision_end|><1.2 seconds><|vision_start|>"
                "<|vision_end|>" + RUBRIC_PROMPT.format(task="put the cup in the bowl")
                + "<|im_end|>\n<|im_start|>assistant\nANSWER: ")
    assert text == expected
    assert RUBRIC_PROMPT.startswith("Given the task, assign a discrete progress score reward (1,2,3,4,5)")
    # training sizes: 4 x 224 x 224 lies within [256, 1024] x 28^2, so 224 stays: 14x14 patches, 49 tokens
    assert [b.grid for b in seq.blocks] == [(1, 14, 14), (1, 14, 14)]
    assert int((seq.input_ids == 151656).sum()) == 2 * 49


def test_score_tokens_are_the_digits(roboreward_fp32):
    assert roboreward_fp32.digit_ids == [16, 17, 18, 19, 20]


def test_reward_is_the_expected_score_of_the_digit_distribution(roboreward_fp32):
    frames = make_frames(5, seed=1)
    out = roboreward_fp32.score("open the drawer", frames)
    logits = roboreward_fp32.digit_logits([roboreward_fp32.sequence("open the drawer", frames)])[0]
    probs = torch.softmax(logits[[16, 17, 18, 19, 20]], dim=-1).numpy()
    expected = float((probs * np.arange(1, 6)).sum())
    assert out.progress.shape == (1,) and out.stamps[0] == frames[-1].stamp
    assert abs(out.extras["expected_score"] - expected) < 1e-5
    assert abs(out.progress[0] - (expected - 1) / 4) < 1e-5
    assert 0.0 <= out.progress[0] <= 1.0
    assert out.extras["answer_score"] == int(np.argmax(probs)) + 1
    assert out.success is None


def test_expected_score_limits():
    certain_five = torch.tensor([-100.0, -100.0, -100.0, -100.0, 100.0])
    assert abs(float(expected_score(certain_five)) - 5.0) < 1e-4
    assert abs(float(expected_score(torch.zeros(5))) - 3.0) < 1e-6


def test_answer_parsing_follows_the_robometer_baseline():
    assert parse_score_answer("ANSWER: 4") == 4
    assert parse_score_answer("answer:2 because") == 2
    assert parse_score_answer("ANSWER: 9, I think 3 or 5") == 5
    assert parse_score_answer("no digits") == 1


def test_cached_equals_uncached(roboreward_fp32):
    frames = make_frames(10, seed=2)
    for window in (frames[:6], frames[:8], frames[2:10]):
        seq = roboreward_fp32.sequence("wipe", window)
        cached = roboreward_fp32.digit_logits([seq], use_cache=True)
        uncached = roboreward_fp32.digit_logits([seq], use_cache=False)
        assert torch.max(torch.abs(cached - uncached)).item() <= 1e-4


def _video_part(model, seq) -> str:
    """Return the decoded tokens from the first vision start to the last vision end."""
    text = model.processing.tokenizer.decode(seq.input_ids)
    return text[re.search(r"<[0-9]", text).start():text.rindex("<|vision_end|>") + len("<|vision_end|>")]


def test_pair_prompt_shows_both_videos_as_a_single_clip_would_then_the_question(roboreward_fp32):
    model = roboreward_fp32
    clip_a, clip_b = make_frames(6, seed=1), make_frames(3, seed=2, start=4.0)
    chosen_a, chosen_b = model.select(clip_a), model.select(clip_b)
    pair = model.pair_sequence("open the drawer", chosen_a, chosen_b)
    text = model.processing.tokenizer.decode(pair.input_ids)
    video_a = _video_part(model, model.sequence("open the drawer", chosen_a))
    video_b = _video_part(model, model.sequence("open the drawer", chosen_b))
    assert text == ("<|im_start|>user\nVideo A: " + video_a + "Video B: " + video_b
                    + PAIR_PROMPT.format(task="open the drawer") + "<|im_end|>\n<|im_start|>assistant\nANSWER: ")
    assert len(pair.blocks) == len(model.sequence("x", chosen_a).blocks) + len(model.sequence("x", chosen_b).blocks)
    assert model.pair_ids == [model.processing.token_id("A"), model.processing.token_id("B")]
    assert model.capabilities.preference


def test_prefer_averages_the_answer_distribution_over_both_orders(roboreward_fp32):
    model = roboreward_fp32
    clip_a, clip_b = make_frames(6, seed=3), make_frames(6, seed=4)
    a, b = model.select(clip_a), model.select(clip_b)
    model.score("open the drawer", clip_a)  # a live window in the streaming cache
    streaming = set(model.vision_cache._store)

    def first_wins(first, second):  # the uncached reference path: each whole clip through the tower
        logits = model.digit_logits([model.pair_sequence("open the drawer", first, second)], use_cache=False)[0]
        return float(torch.softmax(logits[model.pair_ids], dim=-1)[0])

    expected = 0.5 * (first_wins(a, b) + 1.0 - first_wins(b, a))
    p = model.prefer("open the drawer", clip_a, clip_b)
    assert abs(p - expected) < 1e-4
    assert abs(p + model.prefer("open the drawer", clip_b, clip_a) - 1.0) < 1e-6
    assert abs(model.prefer("open the drawer", clip_a, clip_a) - 0.5) < 1e-6
    assert set(model.vision_cache._store) == streaming  # a comparison leaves the live window's blocks alone


def test_generation_returns_a_parsed_score(roboreward_fp32):
    answer = roboreward_fp32.generate_answer("wipe", make_frames(2), max_new_tokens=3)
    assert isinstance(answer["text"], str) and answer["score"] in (1, 2, 3, 4, 5)


@pytest.fixture(scope="module")
def roboreward_baseline(tiny_roboreward_dir):
    from robo_reward_ros.models import load_reward_model
    model = load_reward_model(tiny_roboreward_dir, backend="roboreward", precision="fp32", device="cpu",
                              inputs="robometer_baseline")
    yield model
    model.close()


def _project_inputs(model, name):
    frames = case_frames(name)
    seq = model.sequence(INSTRUCTION, model.select(frames))
    patches, grid = seq.whole_video()
    return seq.input_ids, np.asarray([grid]), patches_to_levels(patches)


@pytest.fixture(params=sorted(CASES))
def case(request, roboreward_fp32, roboreward_baseline):
    name = request.param
    model = roboreward_fp32 if CASES[name][0] == "training" else roboreward_baseline
    return name, model


def test_inputs_equal_the_recorded_reference(case):
    """Ids, grid and every pixel level equal transformers 4.57.1 / qwen-vl-utils 0.0.14 (recorded)."""
    name, model = case
    record = np.load(RECORD)
    assert str(record[f"{name}/frames_sha256"]) == digest(f.rgb for f in case_frames(name))
    ids, grid, levels = _project_inputs(model, name)
    np.testing.assert_array_equal(ids, record[f"{name}/input_ids"])
    np.testing.assert_array_equal(grid, record[f"{name}/video_grid_thw"])
    sample = level_sample(levels).astype(np.int16)
    assert np.abs(sample - record[f"{name}/levels_sample"]).max() == 0  # tolerance: 0 uint8 levels
    assert digest([levels]) == str(record[f"{name}/levels_sha256"])


@pytest.mark.skipif(not reference_available(), reason="needs transformers 4.57, torchvision and qwen-vl-utils")
def test_inputs_equal_the_reference_run_here(case, tiny_roboreward_dir):
    name, model = case
    reference = reference_inputs(tiny_roboreward_dir, name, model.prompt_text(INSTRUCTION))
    ids, grid, levels = _project_inputs(model, name)
    np.testing.assert_array_equal(ids, reference["input_ids"])
    np.testing.assert_array_equal(grid, reference["video_grid_thw"])
    np.testing.assert_array_equal(levels, reference["levels"])


def _prompt_video(model, frames):
    text = model.processing.tokenizer.decode(model.sequence(INSTRUCTION, frames).input_ids)
    return text.split("<|im_start|>user\n", 1)[1].split("Given the task", 1)[0].replace("<|video_pad|>", "")


def test_training_inputs_stamp_real_times_and_repeat_an_odd_last_frame(roboreward_fp32):
    frames = [Frame(stamp=10.0 + t, rgb=f.rgb) for t, f in zip((0.0, 0.4, 1.0, 2.2, 3.0), make_frames(5))]
    blocks = "<|vision_start|><|vision_end|>"
    # blocks (0, 0.4), (1.0, 2.2), (3.0, 3.0): the processor repeats the last index
    assert _prompt_video(roboreward_fp32, frames) == f"<0.2 seconds>{blocks}<1.6 seconds>{blocks}<3.0 seconds>{blocks}"
    assert _prompt_video(roboreward_fp32, frames[:1]) == f"<0.0 seconds>{blocks}"


def test_baseline_inputs_number_a_padded_frame_list(roboreward_baseline):
    """qwen-vl-utils pads 3 frames to 4 and numbers them 0..3 at 2 fps (not the repeated index)."""
    blocks = "<|vision_start|><|vision_end|>"
    assert _prompt_video(roboreward_baseline, make_frames(3)) == f"<0.2 seconds>{blocks}<1.2 seconds>{blocks}"
    assert roboreward_baseline.max_frames == 16


def test_training_frame_count_follows_the_clip_duration():
    assert training_frame_indices([i * 0.1 for i in range(10)]) == [0, 3, 6, 9]  # 1 s: 2 frames -> at least 4
    assert training_frame_indices([i * 0.1 for i in range(25)]) == [0, 6, 12, 18, 24]  # 2.5 s at 2 fps
    assert len(training_frame_indices([i * 0.1 for i in range(100)])) == 8
    assert training_frame_indices([0.0, 0.5]) == [0, 1] and training_frame_indices([3.0]) == [0]


def test_inputs_option_is_checked(tiny_roboreward_dir):
    from robo_reward_ros.models import load_reward_model
    with pytest.raises(ValueError, match="inputs must be one of"):
        load_reward_model(tiny_roboreward_dir, backend="roboreward", device="cpu", inputs="lerobot")
