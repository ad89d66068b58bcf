# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward replay`` and ``robo-reward eval`` end to end on a Meta-World bag, with the tiny Robometer checkpoint.

The offline path is the node's pipeline, and eval's numbers are the metrics of what replay wrote.
"""
import json
import os

import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")
pytest.importorskip("matplotlib", reason="matplotlib is not installed")

RULES = ["success.threshold=0.9", "failure.stall_window_sec=1.5", "inference.rate_hz=2"]


@pytest.fixture(scope="module")
def sim_bag(tmp_path_factory):
    import robo_reward_ros.simulation.metaworld_episodes as mw  # sets MUJOCO_GL before mujoco
    pytest.importorskip("metaworld", reason="metaworld is not installed")
    from robo_reward_ros.recordings.episode_bag import write_episode_bag
    episode = mw.generate_episode(mw.scenario_by_name("pick_place_dropped"), steps=50, size=96)
    return write_episode_bag(episode, str(tmp_path_factory.mktemp("bags") / "dropped"))


@pytest.fixture(scope="module")
def replayed(sim_bag, tiny_robometer_dir, tmp_path_factory):
    from robo_reward_ros.replay.replay_run import run_replay
    out = str(tmp_path_factory.mktemp("replay"))
    run_replay([sim_bag], out, model=tiny_robometer_dir, params=RULES, progress_bar=False)
    return out


def _jsonl(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_replay_writes_estimates_events_truth_and_a_plot(replayed):
    estimates = _jsonl(os.path.join(replayed, "estimates.jsonl"))
    # 50 frames at 0.1 s, a step every 0.5 s of frame time: 0.5, 1.0, ..., 4.5 and the last
    # frame (4.9 s), unless the monitor ended the episode earlier.
    stamps = [e["stamp"] for e in estimates]
    assert stamps == pytest.approx([0.5 * k for k in range(1, 10)] + [4.9][:len(stamps) - 9])
    assert all(e["gt_progress"] is not None and e["gt_stage"] == 0 for e in estimates)
    assert all(e["frame_stamps"][-1] == e["stamp"] for e in estimates)
    with open(os.path.join(replayed, "estimates.csv")) as handle:
        assert len(handle.read().strip().splitlines()) == len(estimates) + 1
    events = _jsonl(os.path.join(replayed, "events.jsonl"))
    assert events[-1]["type"] == "episode_ended"
    with open(os.path.join(replayed, "episodes.json")) as handle:
        summary = json.load(handle)["episodes"][0]
    assert (summary["outcome"], summary["failure_kind"]) == ("failure", "drop")
    assert summary["gt_failure_stamp"] == pytest.approx(4.2)
    png = os.path.join(replayed, "plots", "pick_place_dropped.png")
    with open(png, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_replayed_estimates_are_the_models_scores_of_the_node_window(replayed, sim_bag,
                                                                     robometer_fp32):
    """Each estimate is what the model says about exactly the frames of its window."""
    from robo_reward_ros.recordings.episode_bag import read_episode_bag
    episode = read_episode_bag(sim_bag)
    by_stamp = {round(f.stamp, 6): f for f in episode.frames}
    for estimate in _jsonl(os.path.join(replayed, "estimates.jsonl"))[:4]:
        frames = [by_stamp[round(s, 6)] for s in estimate["frame_stamps"]]
        robometer_fp32.reset()
        output = robometer_fp32.score(episode.instructions[0], frames)
        assert output.progress.tolist() == pytest.approx(estimate["frame_progress"], abs=1e-6)
        assert output.success.tolist() == pytest.approx(estimate["frame_success"], abs=1e-6)


def test_eval_reports_the_metrics_of_the_replayed_trace(replayed, tmp_path):
    from robo_reward_ros.evaluation.eval_run import run_eval
    from robo_reward_ros.evaluation import metrics
    out = str(tmp_path / "eval")
    result = run_eval([replayed], out, preference=False)
    estimates = _jsonl(os.path.join(replayed, "estimates.jsonl"))
    progress = [e["progress"] for e in estimates]
    row = result["rows"][0]
    assert row["voc_spearman_time"] == pytest.approx(metrics.voc_spearman_time(progress))
    assert row["voc_pearson"] == pytest.approx(
        metrics.voc_pearson([e["gt_progress"] for e in estimates], progress))
    assert row["trajectory_reward"] == pytest.approx(progress[-1])
    m = result["metrics"]
    # One failure episode: nothing to detect as success; a failure is there to detect.
    assert m["success_detection"]["tp"] == 0 and m["success_detection"]["fn"] == 0
    assert m["failure_detection"]["tp"] + m["failure_detection"]["fn"] == 1
    assert m["binned_mae_1_5"] == pytest.approx(abs(
        metrics.bin_1_to_5(progress[-1]) - metrics.bin_1_to_5(row["partial_success"])))
    for name in ("report.md", "metrics.json", "summary.png"):
        assert os.path.getsize(os.path.join(out, name)) > 0
    with open(os.path.join(out, "report.md")) as handle:
        assert "binned MAE" in handle.read()


def test_each_failure_kind_is_drawn_in_its_own_style(tmp_path):
    """Before: stall and low-progress markers were the same red line."""
    import matplotlib.image
    from robo_reward_ros.visualisation.plots import event_style, plot_episode
    kinds = ["regression", "stall", "low_progress", "timeout"]
    styles = [event_style({"type": "failure", "kind": kind}) for kind in kinds]
    assert len(set(styles)) == len(kinds)
    assert event_style({"type": "stage_succeeded"}) not in styles
    estimates = [{"stamp": 0.5 * i, "progress": 0.1 * i, "success_prob": None} for i in range(8)]
    events = [{"type": "failure", "kind": kind, "stamp": 1.0 + i, "task_failure": True}
              for i, kind in enumerate(kinds)]
    path = plot_episode({"name": "styles", "outcome": "failure"}, estimates, events,
                        str(tmp_path / "styles.png"))
    assert matplotlib.image.imread(path).shape[0] > 100
