import numpy as np
import torch

from model_fixtures import make_frames
from robo_reward_ros.models.backends.roboreward import RUBRIC_PROMPT, expected_score, parse_score_answer


def test_prompt_is_the_verbatim_rubric_after_the_video(roboreward_fp32):
    seq = roboreward_fp32.sequence("put the cup in the bowl", make_frames(4))
    text = roboreward_fp32.processing.tokenizer.decode(seq.input_ids).replace("<|video_pad|>", "")
    expected = ("<|im_start|>user\n<0.2 seconds><|vision_start|><|vision_end|><1.2 seconds><|vision_start|>"
                "<|vision_end|>" + RUBRIC_PROMPT.format(task="put the cup in the bowl")
                + "<|im_end|>\n<|im_start|>assistant\nANSWER: ")
    assert text == expected
    assert RUBRIC_PROMPT.startswith("Given the task, assign a discrete progress score reward (1,2,3,4,5)")
    # 224x224 is upscaled to 384x384 (qwen-vl-utils per-frame minimum): 24x24 patches, 144 tokens per block
    assert [b.grid for b in seq.blocks] == [(1, 24, 24), (1, 24, 24)]
    assert int((seq.input_ids == 151656).sum()) == 2 * 144


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


def test_generation_returns_a_parsed_score(roboreward_fp32):
    answer = roboreward_fp32.generate_answer("wipe", make_frames(2), max_new_tokens=3)
    assert isinstance(answer["text"], str) and answer["score"] in (1, 2, 3, 4, 5)
