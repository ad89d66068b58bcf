# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward eval`` reports score-pair consistency for every backend that judges both ways.

The figure is the share of pairs where the model's pairwise answer prefers the clip its own
pointwise score ranks higher (TrustRoboReward's consistency). It is checked here against the same
model asked directly on the same clips, for RoboReward (a pair prompt) and Robometer (its
preference head against its progress head), on tiny checkpoints in the published layouts.
"""
import json
import os

import numpy as np
import pytest

from robo_reward_ros.evaluation import metrics

pytest.importorskip("rosbags", reason="rosbags is not installed")
pytest.importorskip("matplotlib", reason="matplotlib is not installed")

SIZE = 64
INSTRUCTION = "push the block right"
CLIP_FRAMES = 4


def test_consistency_counts_agreeing_pairs_and_leaves_ties_out():
    result = metrics.score_pair_consistency([0.9, 0.2, 0.7, 0.5, 0.8], [0.8, 0.1, 0.2, 0.9, 0.4],
                                            [0.1, 0.6, 0.6, 0.1, 0.4])
    # pair 1 agrees (A higher, A preferred), 2 agrees (B higher, B preferred), 3 disagrees;
    # pair 4 answers exactly 0.5 and pair 5 has equal scores: ties, not judged.
    assert result == {"consistency": pytest.approx(2 / 3), "pairs": 5, "judged": 3, "ties": 2}
    assert metrics.score_pair_consistency([0.5], [0.2], [0.3])["consistency"] is None
    with pytest.raises(ValueError, match="equal length"):
        metrics.score_pair_consistency([0.6, 0.4], [0.2], [0.3])
    with pytest.raises(ValueError, match="non-finite"):
        metrics.score_pair_consistency([float("nan")], [0.2], [0.3])


def _episode(name, outcome, positions):
    from robo_reward_ros.core.frame import Frame
    from robo_reward_ros.recordings.episode import Episode, FrameTruth
    frames = []
    for index, x in enumerate(positions):
        rgb = np.full((SIZE, SIZE, 3), 40, np.uint8)
        left = int(x * (SIZE - 16))
        rgb[24:40, left:left + 16] = (220, 40, 40)
        frames.append(Frame(stamp=round(index * 0.1, 6), rgb=rgb))
    truth = [FrameTruth(0, bool(p >= 0.99), float(p)) for p in positions]
    return Episode(name=name, instructions=(INSTRUCTION,), frames=frames, truth=truth, outcome=outcome,
                   failure_kind="stall" if outcome == "failure" else "",
                   failure_step=4 if outcome == "failure" else None, task=INSTRUCTION, source="test")


@pytest.fixture(scope="module")
def bags(tmp_path_factory):
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    root = tmp_path_factory.mktemp("pairs")
    episodes = [_episode("pushed", "success", list(np.linspace(0.0, 1.0, 10))),
                _episode("halfway", "partial", list(np.linspace(0.0, 0.5, 10))),
                _episode("stuck", "failure", [0.1] * 10)]
    return [write_episode_bag(e, str(root / e.name)) for e in episodes]


@pytest.mark.parametrize("backend", ["roboreward", "robometer"])
def test_eval_reports_the_consistency_of_the_models_own_answers(backend, bags, tmp_path, request):
    from robo_reward_ros.evaluation.eval_run import run_eval
    from robo_reward_ros.evaluation.scoring import preference_pairs
    from robo_reward_ros.models import load_reward_model
    from robo_reward_ros.recordings.episode_bag import read_episode_bag
    from robo_reward_ros.replay.replay_run import run_replay
    checkpoint = request.getfixturevalue(f"tiny_{backend}_dir")
    replay = str(tmp_path / "replay")
    run_replay(bags, replay, model=checkpoint, backend=backend, precision="fp32",
               params=["inference.rate_hz=2"], plots=False, progress_bar=False, log=lambda *_: None)
    result = run_eval([replay], str(tmp_path / "eval"), preference_frames=CLIP_FRAMES)
    consistency = result["metrics"]["score_pair_consistency"]
    pairs = preference_pairs(result["rows"])
    assert len(pairs) == 3 and consistency["pairs"] == 3
    assert consistency["judged"] + consistency["ties"] == 3

    # The same model, asked directly on the same clips (4 evenly spaced frames of each episode).
    model = load_reward_model(checkpoint, backend=backend, precision="fp32", device="cpu")
    try:
        clips = {}
        for bag in bags:
            episode = read_episode_bag(bag)
            picks = np.linspace(0, len(episode.frames) - 1, CLIP_FRAMES).round().astype(int)
            clips[episode.name] = [episode.frames[i] for i in sorted(set(picks.tolist()))]
        answers, score_a, score_b = [], [], []
        for a, b in pairs:
            model.reset()
            answers.append(model.prefer(INSTRUCTION, clips[a], clips[b]))
            for name, scores in ((a, score_a), (b, score_b)):
                model.reset()
                scores.append(float(model.score(INSTRUCTION, clips[name]).progress[-1]))
    finally:
        model.close()
    expected = metrics.score_pair_consistency(answers, score_a, score_b)
    assert consistency["judged"] == expected["judged"]
    if expected["judged"]:
        assert consistency["consistency"] == pytest.approx(expected["consistency"])
    with open(tmp_path / "eval" / "metrics.json") as handle:
        assert json.load(handle)["metrics"]["score_pair_consistency"] == json.loads(json.dumps(consistency))
    with open(os.path.join(tmp_path, "eval", "report.md")) as handle:
        assert "score-pair consistency" in handle.read()
