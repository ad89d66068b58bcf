# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward finetune --episode-logs``: the operator's corrections in the node's episode logs label a robot's bag.

One real rosbag2 (rosbags writer) of the camera while the node ran, 5 frames a second; the episode
logs of the same session written by a real TaskMonitor in confirmation mode, in the same frame
stamps: a model success the operator confirmed, a veto then a failure verdict (late, in the next
episode's log), a two-stage episode with a takeover, a model success nobody confirmed, and an
episode the recording missed.
"""
import json

import numpy as np
import pytest

pytest.importorskip("rosbags", reason="rosbags is not installed")
pytest.importorskip("accelerate", reason="accelerate is not installed")

from monitor_traces import estimate  # noqa: E402
from robot_recordings import BASE_NS, write_recording  # noqa: E402

CAMERA = "/camera/image_raw/compressed"
PERIOD_NS = 200_000_000  # 5 frames a second
FRAMES = 65  # frames 0..64: 0.0 .. 12.8 s


def t(k):
    """Return the header stamp, in seconds, of frame ``k`` (what the node logs)."""
    return (BASE_NS + k * PERIOD_NS) / 1e9


def _session(log_dir):
    """Run the node's monitor over the session as an operator corrected it; return the episode ids."""
    from robo_reward_ros.core.monitor_config import MonitorConfig
    from robo_reward_ros.core.operator_labels import Verdict
    from robo_reward_ros.core.task_monitor import TaskMonitor
    from robo_reward_ros.core.task_spec import build_task
    monitor = TaskMonitor(MonitorConfig(success_k=2, success_n=3, log_directory=str(log_dir),
                                        confirm_decisions=True, confirm_timeout_s=0.5))
    cup = build_task(["pick up the cup"])

    def feed(frames, progress, success):
        for k in frames:
            monitor.update(estimate(t(k), progress, success))

    def verdict(k, what, source, reason="", **more):  # the operator's clock runs with the frames
        return monitor.operator_verdict(t(k), what, source, reason, wall=t(k), **more)

    # A (frames 5..15): the model's success at frame 15 pends; the operator confirms at frame 16.
    monitor.start_episode(cup, t(5), episode_id="ep-a")
    feed((6, 8, 10), 0.3, 0.1)
    feed((13, 15), 0.9, 0.9)
    assert verdict(16, Verdict.SUCCESS, "alice").accepted
    # B (frames 20..29): the model's success at 24 pends, vetoed at 25; stopped at 29.
    monitor.start_episode(cup, t(20), episode_id="ep-b")
    feed((22, 24), 0.9, 0.9)
    assert verdict(25, Verdict.NOT_YET, "alice", "cup not lifted").accepted
    feed((27, 29), 0.4, 0.1)
    monitor.abort_episode(t(29), "operator stopped the robot")
    # C (frames 35..48), two stages; B's failure verdict comes late, so it sits in C's log.
    monitor.start_episode(build_task(["pick up the cup", "put the cup on the plate"]), t(35), episode_id="ep-c")
    assert verdict(35, Verdict.FAILURE, "bob", episode_id="ep-b").label.late
    feed((36, 38), 0.3, 0.1)
    assert verdict(38, Verdict.SUCCESS, "alice").accepted  # stage 1 at 7.6 s
    feed((40,), 0.2, 0.1)
    assert monitor.set_intervention(t(40), True, "alice", "teleop").accepted
    feed((42, 44), 0.5, 0.1)
    assert monitor.set_intervention(t(44), False, "alice").accepted
    assert not verdict(45, Verdict.NOT_YET, "carol").accepted  # refused: ignored
    feed((46, 48), 0.8, 0.2)
    assert verdict(48, Verdict.SUCCESS, "alice").accepted
    # D (frames 55..62): the model's success at 59 pends, nobody answers, applied at 62.
    monitor.start_episode(cup, t(55), episode_id="ep-d")
    feed((57, 59), 0.9, 0.9)
    assert monitor.tick(t(62)).step.terminated
    # E: after the recording stopped.
    monitor.start_episode(cup, t(70), episode_id="ep-e")
    feed((71,), 0.3, 0.1)
    assert verdict(72, Verdict.FAILURE, "alice").accepted
    monitor.start_episode(cup, t(80), episode_id="ep-f")  # closes E's log, as the node would
    monitor.abort_episode(t(80), "shutdown")


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = tmp_path_factory.mktemp("operator_session")
    values = [(k / FRAMES, 0.05) for k in range(FRAMES)]
    (root / "today").mkdir()
    bag = write_recording(str(root / "today" / "rosbag2_session"), {CAMERA: "jpeg"}, [("", values)],
                          fps=5.0, instruction_topic=None, size=(64, 64))
    _session(root / "episodes")
    return {"root": root, "bag": bag, "bags": str(root / "today"), "logs": str(root / "episodes")}


def _load(session, **flags):
    from robo_reward_ros.recordings.episode_log_labels import LogLabelling
    from robo_reward_ros.training.operator_episodes import load_logged_episodes
    lines = []
    episodes = load_logged_episodes([session["bags"]], LogLabelling((session["logs"],), **flags),
                                    log=lines.append)
    return {e.name: e for e in episodes}, lines


def _stamps(stage):
    return [round(f.stamp, 6) for f in stage.frames]


def test_the_logs_cut_the_recording_and_the_corrections_label_it(session):
    episodes, lines = _load(session)
    assert list(episodes) == ["ep-a", "ep-b", "ep-c"]
    # A: the model's success confirmed: success at the model's decision, 2.0 s after the start.
    a = episodes["ep-a"]
    (stage,) = a.stages
    assert (a.outcome, a.task, stage.instruction, a.bag) == ("success", "pick up the cup", "pick up the cup",
                                                             session["bag"])
    assert _stamps(stage) == [round(0.2 * i, 6) for i in range(11)]  # frames 5..15, from the start
    assert np.allclose(stage.progress, np.arange(11) / 10, atol=1e-5)
    assert stage.success.tolist() == [False] * 10 + [True]
    # B: vetoed at 1.0 s, then failed: no progress truth, success 0 on the 6 frames up to the veto.
    b = episodes["ep-b"]
    assert b.outcome == "failure" and not b.labelled
    (stage,) = b.stages
    assert len(stage.frames) == 10 and stage.progress is None and stage.not_yet_frames == 6
    assert stage.frames[stage.not_yet_frames - 1].stamp == pytest.approx(1.0, abs=1e-5)
    # C: two stages from the header, the second starting after the StageAdvanced at 0.6 s; the
    # takeover's frames (8.0..8.8 s: frames 40..44) are out; the refused veto changed nothing.
    c = episodes["ep-c"]
    first, second = c.stages
    assert (c.outcome, first.instruction, second.instruction) == ("success", "pick up the cup",
                                                                  "put the cup on the plate")
    assert _stamps(first) == [0.0, 0.2, 0.4, 0.6]
    assert np.allclose(first.progress, [0, 1 / 3, 2 / 3, 1], atol=1e-5) and first.success.tolist()[-1]
    assert _stamps(second) == [0.2, 1.4, 1.6, 1.8, 2.0]  # frames 39, 45..48, from the stage's start
    assert np.allclose(second.progress, np.array([0.2, 1.4, 1.6, 1.8, 2.0]) / 2.0, atol=1e-5)
    assert second.success.tolist() == [False] * 4 + [True] and second.not_yet_frames == 0
    assert lines[0] == ("finetune: episode logs: 6 episode(s) found, 3 taken: 2 success, 1 failure, "
                        "0 hard negative (vetoed, not yet successful); 3 skipped; 1 hard-negative span(s); "
                        "5 intervention frame(s) excluded; 22 frame(s) outside every episode dropped")
    assert lines[1:] == [
        "finetune:   ep-a: success; success at 2.00 s (confirmed model); 11 frame(s)",
        "finetune:   ep-b: failure; not yet successful up to 1.00 s (veto; 6 frame(s)); 10 frame(s)",
        "finetune:   ep-c: success; stage 1: success at 0.60 s (operator); stage 2: success at 2.60 s "
        "(operator); 5 takeover frame(s) excluded; 9 frame(s)",
        "finetune:   ep-d: skipped: the model's success at 0.80 s was not confirmed by an operator "
        "(--trust-model-successes takes it)",
        "finetune:   ep-e: skipped: 0 frame(s) of it in the recordings; at least 2 are needed",
        "finetune:   ep-f: skipped: no operator verdict (applied or late)",
    ]


def test_the_logged_labels_and_the_flags(session):
    from robo_reward_ros.recordings.episode_log_labels import read_logged_episodes
    logged = {e.episode_id: e for e in read_logged_episodes([session["logs"]])}
    assert logged["ep-a"].success_sec == pytest.approx(2.0, abs=1e-5)
    assert logged["ep-b"].stages[0].not_yet_until == pytest.approx(t(25)) and logged["ep-b"].outcome == "failure"
    assert logged["ep-c"].interventions == [(pytest.approx(t(40)), pytest.approx(t(44)))]
    assert logged["ep-c"].stages[1].not_yet_until is None  # carol's refused veto
    assert logged["ep-c"].success_sec == pytest.approx(2.6, abs=1e-5)
    # The model's own success counts only when asked; a takeover's frames stay when asked.
    episodes, lines = _load(session, trust_model_successes=True, keep_intervention_frames=True)
    d = episodes["ep-d"]
    assert d.outcome == "success" and d.stages[0].success.tolist() == [False] * 4 + [True] * 4
    assert "ep-d: success; success at 0.80 s (model)" in lines[4]
    assert len(episodes["ep-c"].stages[1].frames) == 10 and "intervention" not in lines[3]


def test_a_veto_trains_success_zero_and_claims_no_progress(session, tiny_robometer_dir, tmp_path):
    import torch
    from robo_reward_ros.training.finetune import Finetuner, FinetuneConfig
    from robo_reward_ros.training.objective import build_batch, robometer_loss
    trainer = Finetuner(FinetuneConfig(model=tiny_robometer_dir, episodes=[session["bags"]], out=str(tmp_path),
                                       episode_logs=[session["logs"]], batch_size=2, progress_bar=False),
                        log=lambda *_: None)
    ((episode, stage),) = trainer.sampler.not_yet
    assert episode.name == "ep-b"
    rng = np.random.default_rng(0)
    drawn = [trainer.sampler.progress_example(rng) for _ in range(40)]
    vetoed = [e for e in drawn if e.kind == "not_yet"]
    assert vetoed and all(e.progress is None and not e.success.any() for e in vetoed)
    # Every frame of a vetoed clip is one of the frames up to the veto.
    allowed = {id(f) for f in stage.frames[:stage.not_yet_frames]}
    assert all(id(f) in allowed for e in vetoed for f in e.frames)
    batch = build_batch(trainer.backend, [vetoed[0]], torch.device("cpu"))
    assert torch.isnan(batch.progress).all() and (batch.success == 0).all() and len(batch.success)
    outputs = trainer.module(batch.inputs, batch.prog_index, batch.pref_index)
    terms = robometer_loss(outputs, batch, trainer.weights, trainer.backend.progress_bins)
    assert terms["progress"].item() == 0.0 and terms["success"].item() > 0.0
    assert torch.isfinite(terms["loss"])


def test_finetune_on_a_day_of_corrected_episodes_writes_a_checkpoint(session, tiny_robometer_dir, tmp_path,
                                                                     capsys):
    from scripted_backend import painted
    from robo_reward_ros.cli.finetune import main
    from robo_reward_ros.core.frame import Frame
    from robo_reward_ros.models.loading.loader import load_reward_model
    out = tmp_path / "today"
    assert main(["--model", tiny_robometer_dir, "--episodes", session["bags"], "--episode-logs", session["logs"],
                 "--out", str(out), "--mode", "heads", "--epochs", "1", "--steps-per-epoch", "2",
                 "--batch-size", "2", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "3 taken: 2 success, 1 failure" in printed and "finetune: 2 steps in" in printed
    with open(out / "training.json") as handle:
        training = json.load(handle)
    assert training["episode_names"] == ["ep-a", "ep-b", "ep-c"]
    assert training["config"]["episode_logs"] == [session["logs"]] and training["steps"] == 2
    assert all(np.isfinite(row["loss"]) for row in training["history"]["train"])
    model = load_reward_model(str(out), "robometer", precision="fp32", device="cpu")
    try:
        frames = [Frame(stamp=0.5 * i, rgb=painted(i / 4, 0.05, (64, 64))) for i in range(4)]
        result = model.score("pick up the cup", frames)
        assert result.progress.shape == (4,) and np.all((result.progress >= 0) & (result.progress <= 1))
    finally:
        model.close()
    # --labels and --episode-logs both label robot recordings: one or the other.
    assert main(["--model", tiny_robometer_dir, "--episodes", session["bags"], "--episode-logs", session["logs"],
                 "--labels", str(tmp_path / "labels.csv"), "--out", str(tmp_path / "x")]) == 1
    assert "give --labels or --episode-logs, not both" in capsys.readouterr().err
