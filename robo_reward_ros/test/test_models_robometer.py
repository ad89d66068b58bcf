# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
import json
import os
import shutil

import numpy as np
import pytest
import torch

from model_fixtures import make_frames
from robo_reward_ros.models import CheckpointError, load_reward_model
from robo_reward_ros.models.backends.robometer import PROGRESS_PROMPT
from robo_reward_ros.models.backends.robometer_modeling import decode_progress
from robo_reward_ros.models.qwen.vision_preprocessing import normalize, patchify_frames

PROG = "<|prog_token|>"


def test_special_tokens_land_at_the_documented_ids(robometer_fp32):
    assert robometer_fp32.token_ids == {"<|split_token|>": 151669, "<|reward_token|>": 151670,
                                        "<|pref_token|>": 151671, "<|sim_token|>": 151672, "<|prog_token|>": 151673}


def test_progress_prompt_renders_per_contract(robometer_fp32):
    frames = make_frames(2)
    seq = robometer_fp32.progress_sequence("stack the cup", frames)
    text = robometer_fp32.processing.tokenizer.decode(seq.input_ids).replace("<|image_pad|>", "")
    prompt = PROGRESS_PROMPT.format(task="stack the cup")
    expected = (f"<|im_start|>user\n{prompt}Picture 1: <|vision_start|><|vision_end|>{PROG}"
                f"Picture 2: <|vision_start|><|vision_end|>{PROG}<|im_end|>\n")
    assert text == expected
    # 224x224 stays 224x224 (a multiple of 32): 14x14 patches, 49 merged tokens per image
    assert int((seq.input_ids == 151655).sum()) == 2 * 49
    assert [b.grid for b in seq.blocks] == [(1, 14, 14), (1, 14, 14)]


def test_score_has_contract_shapes_and_ranges(robometer_fp32):
    frames = make_frames(11)
    out = robometer_fp32.score("stack the cup", frames)
    assert out.backend == "robometer"
    assert len(out.input_stamps) == 8 and out.input_stamps[0] == frames[0].stamp
    assert out.input_stamps[-1] == frames[-1].stamp
    assert out.progress.shape == out.success.shape == out.stamps.shape == (8,)
    assert np.all((out.progress >= 0) & (out.progress <= 1))
    assert np.all((out.success > 0) & (out.success < 1))
    assert len(set(np.round(out.progress, 6))) > 1  # per-frame values, not one broadcast number


def test_decode_progress_is_expected_bin_centre():
    uniform = decode_progress(torch.zeros(1, 10))
    assert torch.allclose(uniform, torch.tensor([0.5]))
    peaked = torch.full((1, 10), -50.0)
    peaked[0, 9] = 50.0
    assert torch.allclose(decode_progress(peaked), torch.tensor([1.0]))
    probs = torch.zeros(1, 10)
    probs[0, 2] = 1.0  # already a distribution: used as is
    assert torch.allclose(decode_progress(probs), torch.tensor([2 / 9]))


def test_cached_vision_features_match_uncached_over_a_sliding_window(robometer_fp32):
    frames = make_frames(12, seed=3)
    robometer_fp32.reset()
    for end in (8, 9, 10, 12):
        seq = robometer_fp32.progress_sequence("open the drawer", robometer_fp32.select(frames[:end]))
        cached = robometer_fp32.last_hidden_states([seq], use_cache=True)
        uncached = robometer_fp32.last_hidden_states([seq], use_cache=False)
        assert torch.max(torch.abs(cached - uncached)).item() <= 1e-4
    assert robometer_fp32.vision_cache.hits > 0
    assert len(robometer_fp32.vision_cache) <= 8


def test_prefix_kv_cache_matches_full_recompute_as_the_window_grows_and_slides(robometer_fp32):
    """The instruction and the window's first frame are reused; every frame's outputs stay those of a full pass."""
    frames = make_frames(14, seed=8)
    robometer_fp32.reset()
    cache = robometer_fp32.prefix_cache
    reused_before = cache.reused_tokens
    queries = [("open the drawer", frames[:end]) for end in range(1, 15)]
    queries += [("close the drawer", frames[:9]), ("close the drawer", frames[3:12])]  # new task, new first frame
    for instruction, window in queries:
        cached = robometer_fp32.score_batch(instruction, [window], use_cache=True)[0]
        full = robometer_fp32.score_batch(instruction, [window], use_cache=False)[0]
        np.testing.assert_allclose(cached.progress, full.progress, atol=1e-4)
        np.testing.assert_allclose(cached.success, full.success, atol=1e-4)
        np.testing.assert_array_equal(cached.stamps, full.stamps)
    prompt_and_first_frame = int(np.nonzero(
        robometer_fp32.progress_sequence("open the drawer", frames[:2]).input_ids == 151673)[0][0])
    assert cache.reused_tokens - reused_before >= 12 * prompt_and_first_frame


def test_batch_of_cameras_equals_separate_queries(robometer_fp32):
    a, b = make_frames(8, seed=4), make_frames(5, seed=5)
    batched = robometer_fp32.score_batch("wipe", [a, b])
    for clip, out in zip((a, b), batched):
        single = robometer_fp32.score("wipe", clip)
        np.testing.assert_allclose(out.progress, single.progress, atol=1e-4)
        np.testing.assert_allclose(out.success, single.success, atol=1e-4)


def test_preference_prompt_and_probability(robometer_fp32):
    a, b = make_frames(4, seed=6), make_frames(4, seed=7)
    seq = robometer_fp32.preference_sequence("stack", robometer_fp32.select(a), robometer_fp32.select(b))
    text = robometer_fp32.processing.tokenizer.decode(seq.input_ids).replace("<|image_pad|>", "")
    assert "This is Trajectory A. Picture 1: " in text and "<|split_token|>This is Trajectory B. Picture 5: " in text
    assert text.endswith("Now predict the preference between the two trajectories.<|pref_token|><|im_end|>\n")
    assert text.count(PROG) == 8  # 4 + 4 frames: short clips are not padded
    p_ab = robometer_fp32.prefer("stack", a, b)
    assert 0.0 < p_ab < 1.0
    assert p_ab != robometer_fp32.prefer("stack", b, a)


def test_video_patches_match_transformers_image_processor():
    """Compare the hand-written video path against transformers' image processor, which the image path uses.

    Transformers' video processor needs torchvision. A two-frame block of one frame is that image
    repeated over the temporal patch.
    """
    from robo_reward_ros.models.qwen.vision_preprocessing import image_patches
    rgb = make_frames(1, height=96, width=128)[0].rgb
    reference = image_patches(rgb, 16, 2, 2, [0.5] * 3, [0.5] * 3)
    chw = normalize(rgb, [0.5] * 3, [0.5] * 3)
    ours, grid = patchify_frames([chw, chw], 16, 2, 2)
    assert grid == (1, 96 // 16, 128 // 16)
    np.testing.assert_allclose(ours, reference, atol=1e-6)


def _copy(src, dst):
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("base_model"))
    return str(dst)


def test_missing_shard_is_named(tiny_robometer_dir, tmp_path):
    broken = _copy(tiny_robometer_dir, tmp_path / "ckpt")
    os.remove(os.path.join(broken, "model-00002-of-00002.safetensors"))
    with pytest.raises(CheckpointError, match="model-00002-of-00002.safetensors"):
        load_reward_model(broken, precision="fp32", device="cpu")


def test_corrupt_shard_is_named(tiny_robometer_dir, tmp_path):
    broken = _copy(tiny_robometer_dir, tmp_path / "ckpt")
    shard = os.path.join(broken, "model-00001-of-00002.safetensors")
    with open(shard, "rb") as handle:
        data = handle.read()
    with open(shard, "wb") as handle:
        handle.write(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="model-00001-of-00002.safetensors: corrupt or trunc"):
        load_reward_model(broken, precision="fp32", device="cpu")


def test_wrong_architecture_is_named(tiny_robometer_dir, tmp_path):
    broken = _copy(tiny_robometer_dir, tmp_path / "ckpt")
    path = os.path.join(broken, "config.json")
    config = json.load(open(path))
    config["architectures"] = ["LlamaForCausalLM"]
    json.dump(config, open(path, "w"))
    with pytest.raises(CheckpointError, match="unsupported architecture.*LlamaForCausalLM"):
        load_reward_model(broken, precision="fp32", device="cpu")


def test_bin_only_checkpoint_is_refused(tiny_robometer_dir, tmp_path):
    broken = _copy(tiny_robometer_dir, tmp_path / "ckpt")
    for name in os.listdir(broken):
        if name.startswith("model"):
            os.remove(os.path.join(broken, name))
    open(os.path.join(broken, "pytorch_model.bin"), "wb").close()
    with pytest.raises(CheckpointError, match="safetensors only"):
        load_reward_model(broken, precision="fp32", device="cpu")


def test_missing_tokenizer_names_the_base_model(tiny_robometer_dir, tmp_path):
    broken = _copy(tiny_robometer_dir, tmp_path / "ckpt")
    base = tmp_path / "base_without_tokenizer"
    base.mkdir()
    shutil.copy(os.path.join(tiny_robometer_dir, "base_model", "config.json"), base / "config.json")
    yaml_path = os.path.join(broken, "config.yaml")
    text = open(yaml_path).read().replace(os.path.join(tiny_robometer_dir, "base_model"), str(base))
    open(yaml_path, "w").write(text)
    with pytest.raises(CheckpointError, match="tokenizer"):
        load_reward_model(broken, precision="fp32", device="cpu")


def test_plain_qwen3vl_needs_an_explicit_backend(tiny_qwen3vl_dir):
    with pytest.raises(CheckpointError, match="backend='roboreward'"):
        load_reward_model(tiny_qwen3vl_dir, precision="fp32", device="cpu")


def test_a_short_window_is_scored_as_it_is(robometer_fp32, tiny_robometer_dir):
    """Check that a window shorter than max_frames is passed as it is, as the published code does.

    The published inference code (and LeRobot) passes it as it is; padding it by repeating the last
    frame is the training loaders' behaviour, an option.
    """
    frames = make_frames(5, height=64, width=64, seed=7)
    robometer_fp32.reset()
    plain = robometer_fp32.score("open the drawer", frames)
    assert list(plain.input_stamps) == [f.stamp for f in frames]
    seq = robometer_fp32.progress_sequence("open the drawer", frames)
    assert robometer_fp32.processing.tokenizer.decode(seq.input_ids).count(PROG) == 5
    padded_model = load_reward_model(tiny_robometer_dir, precision="fp32", device="cpu", pad_short_windows=True)
    try:
        padded = padded_model.score("open the drawer", frames)
    finally:
        padded_model.close()
    assert list(padded.input_stamps) == [f.stamp for f in frames] + [frames[-1].stamp] * 3
    assert list(padded.stamps) == list(plain.stamps)  # one value per distinct frame either way
    assert abs(float(padded.progress[-1]) - float(plain.progress[-1])) > 1e-4  # they differ
