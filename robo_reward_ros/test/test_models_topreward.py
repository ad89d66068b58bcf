# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
import numpy as np
import pytest

from model_fixtures import make_frames
from robo_reward_ros.models.backends.topreward import PREFIX
from robo_reward_ros.models.backends.topreward_normalization import (CausalMinMax, hindsight_minmax, hindsight_progress,
                                                                     prefix_lengths)


def test_prompt_is_the_published_non_chat_form(topreward_fp32):
    seq = topreward_fp32.sequence("fold the towel", make_frames(2, height=200, width=240))
    text = topreward_fp32.processing.tokenizer.decode(seq.input_ids).replace("<|video_pad|>", "")
    assert text == ("<|im_start|>user\n<0.2 seconds><|vision_start|><|vision_end|>" + PREFIX
                    + "fold the towel Decide whether the above statement is True or not. The answer is: True")
    assert int(seq.input_ids[-1]) == topreward_fp32.true_id == 3007
    # frames go to 244x244, then the processor's rounding to 256x256: 16x16 patches, 64 tokens
    assert [b.grid for b in seq.blocks] == [(1, 16, 16)]


def test_a_single_frame_repeats_its_index_as_the_references_do(topreward_fp32):
    """Check that one frame is padded to a two-frame block with its index repeated ([0, 0]).

    The block is thus stamped 0.0 s (qwen-vl-utils + Qwen3VLProcessor, LeRobot); numbering the
    copy 1 said 0.2 s.
    """
    seq = topreward_fp32.sequence("fold the towel", make_frames(1, height=200, width=240))
    text = topreward_fp32.processing.tokenizer.decode(seq.input_ids).replace("<|video_pad|>", "")
    assert text == ("<|im_start|>user\n<0.0 seconds><|vision_start|><|vision_end|>" + PREFIX
                    + "fold the towel Decide whether the above statement is True or not. The answer is: True")
    assert [b.grid for b in seq.blocks] == [(1, 16, 16)]


def test_prefix_kv_cache_matches_full_recompute(topreward_fp32):
    frames = make_frames(7, height=120, width=160, seed=4)
    topreward_fp32.reset()
    reused_before = topreward_fp32.prefix_cache.reused_tokens
    for length in range(1, 8):
        cached = topreward_fp32.log_probs("pick", frames[:length], use_cache=True)
        uncached = topreward_fp32.log_probs("pick", frames[:length], use_cache=False)
        assert abs(cached[0] - uncached[0]) <= 1e-4 and abs(cached[1] - uncached[1]) <= 1e-4
        assert cached[0] < 0
    assert topreward_fp32.prefix_cache.reused_tokens > reused_before


def test_online_score_is_causal_and_in_range(topreward_fp32):
    frames = make_frames(5, height=64, width=64, seed=5)
    topreward_fp32.reset()
    outs = [topreward_fp32.score("pick", frames[:n]) for n in range(1, 6)]
    assert outs[0].progress[0] == 0.0
    for n, out in enumerate(outs, start=1):
        assert out.stamps[0] == frames[n - 1].stamp and 0.0 <= out.progress[0] <= 1.0
        assert out.extras["p_true"] == pytest.approx(np.exp(out.extras["log_prob_true"]))


def test_episode_scoring_uses_hindsight_normalisation(topreward_fp32):
    frames = make_frames(6, height=64, width=64, seed=6)
    out = topreward_fp32.score_episode("pick", frames)
    assert out.progress.shape == (6,) and out.extras["prefix_lengths"] == [1, 2, 3, 4, 5, 6]
    assert out.progress.min() == 0.0 and out.progress.max() == 1.0


def test_prefix_schedule_matches_upstream():
    assert prefix_lengths(2) == [2]
    assert prefix_lengths(30) == sorted(set(np.linspace(1, 30, 15, dtype=int).tolist()))
    assert prefix_lengths(4, num_samples=0) == [1, 2, 3, 4]


def test_hindsight_normalisation_edge_cases():
    assert list(hindsight_minmax([-3.0])) == [1.0]
    assert list(hindsight_minmax([-2.0, -2.0])) == [1.0, 1.0]
    np.testing.assert_allclose(hindsight_minmax([-4.0, -2.0, -3.0]), [0.0, 1.0, 0.5])
    np.testing.assert_allclose(hindsight_progress([1, 3], [-4.0, -2.0], 3), [0.0, 0.5, 1.0])


def test_causal_normaliser_uses_only_the_past():
    norm = CausalMinMax(min_span=0.5)
    values = [norm.update(r) for r in (-5.0, -4.9, -3.0, -4.0)]
    assert values[0] == 0.0
    assert values[1] == pytest.approx(0.1 / 0.5)  # small early changes are not stretched to 1
    assert values[2] == 1.0  # a new episode maximum
    assert values[3] == pytest.approx(0.5)
    anchored = CausalMinMax(min_span=0.5, ceiling=0.0)
    assert [anchored.update(r) for r in (-4.0, -2.0)] == [0.0, pytest.approx(0.5)]
