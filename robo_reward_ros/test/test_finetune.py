# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward finetune`` on a tiny Robometer checkpoint and small synthetic episode bags.

The loss falls on a fixed batch, the output loads and scores through the inference path, resume
continues exactly where a run stopped, unusable episodes are named, LoRA merges into the
published key layout.
"""
import os

import numpy as np
import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")
pytest.importorskip("accelerate", reason="accelerate is not installed")

from robo_reward_ros.core.frame import Frame  # noqa: E402
from robo_reward_ros.recordings.episode import Episode, FrameTruth  # noqa: E402
from robo_reward_ros.recordings.episode_bag import write_episode_bag  # noqa: E402

SIZE = 64  # smallest frame the Qwen3-VL resize keeps (4096 pixels): 4 tokens per frame


def _frames(positions, colour):
    frames = []
    for index, x in enumerate(positions):
        rgb = np.full((SIZE, SIZE, 3), 40, np.uint8)
        left = int(x * (SIZE - 16))
        rgb[24:40, left:left + 16] = colour
        frames.append(Frame(stamp=round(index * 0.1, 6), rgb=rgb))
    return frames


def _episode(name, instruction, outcome, positions, colour=(220, 40, 40), truth=True):
    rows = [FrameTruth(0, bool(p >= 0.99), float(p)) for p in positions] if truth else None
    return Episode(name=name, instructions=(instruction,), frames=_frames(positions, colour), truth=rows,
                   outcome=outcome, failure_kind="stall" if outcome == "failure" else "",
                   failure_step=4 if outcome == "failure" else None, task=instruction, source="test")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    from robo_reward_ros.models.testing.tiny_checkpoints import build_checkpoint
    root = tmp_path_factory.mktemp("finetune")
    base = build_checkpoint("robometer", str(root / "base"))
    ramp = list(np.linspace(0.0, 1.0, 12))
    stuck = list(np.linspace(0.0, 0.3, 5)) + [0.3] * 7
    bags = root / "bags"
    for episode in (_episode("push_ok", "push the block right", "success", ramp),
                    _episode("push_stuck", "push the block right", "failure", stuck),
                    _episode("lift_ok", "lift the green block", "success", ramp, (40, 200, 40)),
                    _episode("lift_half", "lift the green block", "partial", ramp[:6], (40, 200, 40))):
        write_episode_bag(episode, str(bags / episode.name))
    held = root / "held"
    write_episode_bag(_episode("push_ok_2", "push the block right", "success", ramp), str(held / "push_ok_2"))
    write_episode_bag(_episode("push_stuck_2", "push the block right", "failure", stuck),
                      str(held / "push_stuck_2"))
    return {"root": root, "base": base, "bags": str(bags), "held": str(held)}


def _config(workspace, out, **overrides):
    from robo_reward_ros.training.finetune import FinetuneConfig
    values = dict(model=workspace["base"], episodes=[workspace["bags"]], out=str(out), epochs=1,
                  steps_per_epoch=2, batch_size=2, warmup_steps=1, progress_bar=False)
    values.update(overrides)
    return FinetuneConfig(**values)


def test_loss_decreases_on_a_fixed_batch(workspace, tmp_path):
    from robo_reward_ros.training.finetune import Finetuner
    trainer = Finetuner(_config(workspace, tmp_path / "out", lr=1e-3, epochs=10, steps_per_epoch=10))
    examples = trainer.draw(0)
    kinds = {e.kind for e in examples}
    losses = [trainer.train_step(examples)["loss"] for _ in range(12)]
    assert np.isfinite(losses).all()
    assert np.mean(losses[-3:]) < 0.7 * np.mean(losses[:3]), (kinds, losses)


def test_finetune_writes_a_checkpoint_the_inference_path_loads(workspace, tmp_path):
    from robo_reward_ros.cli.finetune import main
    from robo_reward_ros.models.loading.loader import load_reward_model
    out = tmp_path / "tuned"
    code = main(["--model", workspace["base"], "--episodes", workspace["bags"], "--out", str(out),
                 "--epochs", "2", "--steps-per-epoch", "2", "--batch-size", "2", "--quiet",
                 "--eval-episodes", workspace["held"], "-p", "success.threshold=0.9"])
    assert code == 0
    names = set(os.listdir(out))
    assert {"config.json", "config.yaml", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors", "training_curves.png", "training.json"} <= names
    assert not [n for n in names if n.endswith((".bin", ".pt", ".pth"))]
    assert (out / "eval" / "epoch-1" / "report.md").is_file()
    assert (out / "eval" / "epoch-2" / "metrics.json").is_file()
    assert (out / "training_curves.png").stat().st_size > 5000
    model = load_reward_model(str(out), "robometer", precision="fp32", device="cpu")
    try:
        frames = _frames(np.linspace(0, 1, 6), (220, 40, 40))
        result = model.score("push the block right", frames)
        assert result.progress.shape == (6,)
        assert np.all((result.progress >= 0) & (result.progress <= 1))
        assert 0.0 <= model.prefer("push the block right", frames, frames[:2]) <= 1.0
    finally:
        model.close()
    # The weights changed from the base checkpoint's.
    from safetensors.torch import load_file
    before = load_file(os.path.join(workspace["base"], "model-00002-of-00002.safetensors"))
    after = load_file(str(out / "model-00002-of-00002.safetensors"))
    assert set(before) == set(after)
    assert any(not (before[k].float() == after[k].float()).all() for k in before if "progress_head" in k)


def test_resume_continues_exactly(workspace, tmp_path):
    from safetensors.torch import load_file
    from robo_reward_ros.training.finetune import finetune
    straight = tmp_path / "straight"
    finetune(_config(workspace, straight, epochs=2), log=lambda *_: None)
    stopped = tmp_path / "stopped"
    finetune(_config(workspace, stopped, epochs=1), log=lambda *_: None)
    logs = []
    result = finetune(_config(workspace, stopped, epochs=2), log=logs.append)
    assert any("resumed" in line and "step 2" in line for line in logs), logs
    assert result["steps"] == 4
    a = load_file(str(straight / "resume" / "trainable.safetensors"))
    b = load_file(str(stopped / "resume" / "trainable.safetensors"))
    assert set(a) == set(b)
    for key in a:
        assert np.allclose(a[key].numpy(), b[key].numpy(), atol=1e-6), key


def test_unusable_episodes_are_named(workspace, tmp_path):
    from robo_reward_ros.cli.finetune import main
    from robo_reward_ros.training.episodes import UnusableEpisodeError, load_episodes
    bad = tmp_path / "unlabelled"
    write_episode_bag(_episode("mystery", "push the block right", "", list(np.linspace(0, 1, 4)), truth=False),
                      str(bad / "mystery"))
    with pytest.raises(UnusableEpisodeError,
                       match=r"mystery: no per-frame ground truth \(/ground_truth\) and no outcome"):
        load_episodes([workspace["bags"], str(bad)])
    assert len(load_episodes([workspace["bags"], str(bad)], skip_unusable=True, log=lambda *_: None)) == 4
    with pytest.raises(UnusableEpisodeError, match="no episode with progress labels"):
        load_episodes([str(bad)], skip_unusable=True, log=lambda *_: None)
    assert main(["--model", workspace["base"], "--episodes", str(bad), "--out", str(tmp_path / "o")]) == 1


def test_success_only_episodes_get_time_as_progress(tmp_path):
    from robo_reward_ros.training.episodes import episode_from_bag
    episode = _episode("clip", "wave", "success", list(np.linspace(0, 1, 5)), truth=False)
    write_episode_bag(episode, str(tmp_path / "clip"))
    stage = episode_from_bag(str(tmp_path / "clip")).stages[0]
    assert np.allclose(stage.progress, [0, 0.25, 0.5, 0.75, 1.0])
    assert stage.success.tolist() == [False, False, False, False, True]


def test_examples_include_pairs_and_counterfactuals(workspace):
    from robo_reward_ros.training.episodes import ExampleSampler, load_episodes
    sampler = ExampleSampler(load_episodes([workspace["bags"]]), 8, counterfactual_fraction=0.3,
                             preference_fraction=0.3)
    examples = sampler.batch(np.random.default_rng(0), 60)
    kinds = {e.kind for e in examples}
    assert kinds == {"progress", "counterfactual", "preference"}
    for example in examples:
        assert len(example.frames) == 8
        if example.kind == "counterfactual":
            assert not example.progress.any() and not example.success.any()
        if example.kind == "preference":
            assert example.preference in (0.0, 1.0) and len(example.frames_b) == 8
    # Identical draws from the same seed.
    again = sampler.batch(np.random.default_rng(0), 60)
    assert [e.instruction for e in again] == [e.instruction for e in examples]


def test_counterfactuals_use_the_opposite_task_of_the_same_scene(tmp_path):
    """Before: a counterfactual took any other instruction, so "close the drawer" was rarely seen on an opened one."""
    from robo_reward_ros.training.episodes import ExampleSampler, load_episodes
    ramp = list(np.linspace(0.0, 1.0, 12))
    names = ("open the drawer", "close the drawer", "lift the green block", "push the block right",
             "wave", "stack the cups")
    for index, instruction in enumerate(names):
        write_episode_bag(_episode(f"e{index}", instruction, "success", ramp), str(tmp_path / f"e{index}"))
    episodes = load_episodes([str(tmp_path)])
    sampler = ExampleSampler(episodes, 8, counterfactual_fraction=1.0, preference_fraction=0.0, contrast_share=0.5)
    assert sampler.opposites == {"open the drawer": "close the drawer", "close the drawer": "open the drawer"}
    opening = next(e for e in episodes if e.task == "open the drawer").stages[0]
    examples = sampler.batch(np.random.default_rng(0), 600)
    on_opening = [e for e in examples if e.frames[0] is opening.frames[0]]
    assert on_opening and all(e.kind == "counterfactual" for e in on_opening)
    assert all(not e.progress.any() and not e.success.any() for e in on_opening)
    # Half of them plus a fifth of the rest name the opposite task: 0.6 (0.2 by chance alone).
    share = np.mean([e.instruction == "close the drawer" for e in on_opening])
    assert 0.45 < share < 0.75, share


@pytest.mark.parametrize("mode", ["heads", "lora"])
def test_modes_train_their_parameters_and_export_the_published_keys(workspace, tmp_path, mode):
    if mode == "lora":
        pytest.importorskip("peft", reason="peft is not installed")
    import torch
    from safetensors.torch import load_file
    from robo_reward_ros.training.checkpoint import exported_state
    from robo_reward_ros.training.finetune import Finetuner
    trainer = Finetuner(_config(workspace, tmp_path / mode, mode=mode, lr=1e-2))
    before = {k: v.clone() for k, v in exported_state(trainer.network, torch.float32).items()}
    for step in range(2):
        trainer.train_step(trainer.draw(step))
    after = exported_state(trainer.network, torch.float32)
    published = set(load_file(os.path.join(workspace["base"], "model-00001-of-00002.safetensors")))
    published |= set(load_file(os.path.join(workspace["base"], "model-00002-of-00002.safetensors")))
    assert set(after) == published
    changed = {k for k in after if not torch.equal(before[k], after[k])}
    assert any(k.startswith("progress_head") for k in changed)
    if mode == "heads":
        assert all(k.split(".")[0].endswith("_head") for k in changed), changed
    else:  # LoRA deltas merged into the language model's projections; the vision tower untouched
        assert any("language_model.layers" in k and "proj" in k for k in changed)
        assert not any(k.startswith("model.visual") for k in changed)
