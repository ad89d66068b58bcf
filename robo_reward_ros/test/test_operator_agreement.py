# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward eval --operator-logs``: the model's success decisions against the operator, from real episode logs.

The logs are written by the task monitor itself (no hand-made records), so a change of the log
format breaks these counts.
"""
import json

import pytest

from monitor_traces import estimate
from robo_reward_ros.cli.main import main
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.operator_labels import Verdict
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task
from robo_reward_ros.evaluation.operator_agreement import operator_agreement

ONE = ["open the drawer"]
TWO = ["open the drawer", "close the drawer"]
EPISODE_S = 1.5 + 2.0 + 7.0 + 2.5 + 3.5 + 7.0


def _write_logs(directory):
    """Six episodes: TP, FP (vetoed pending), unlabelled, FP (late veto) after an unlabelled stage, FN, TN."""
    confirming = TaskMonitor(MonitorConfig(success_k=2, success_n=3, log_directory=str(directory),
                                           confirm_decisions=True, confirm_timeout_s=5.0))
    confirming.start_episode(build_task(ONE), 0.0, episode_id="confirmed")
    for t in (1.0, 1.5):
        confirming.update(estimate(t, 0.9, 0.9))
    assert confirming.operator_verdict(1.6, Verdict.SUCCESS, "alice").accepted
    confirming.start_episode(build_task(ONE), 10.0, episode_id="vetoed")
    for t in (11.0, 11.5):
        confirming.update(estimate(t, 0.9, 0.9))
    assert confirming.operator_verdict(11.6, Verdict.NOT_YET, "alice", "handle still out").accepted
    confirming.update(estimate(12.0, 0.5, 0.1))
    # A failure after the veto: the stage had a (false) model decision, so this is no true negative.
    assert confirming.operator_verdict(12.0, Verdict.FAILURE, "alice").accepted
    confirming.start_episode(build_task(ONE), 20.0, episode_id="unanswered")
    for t in (21.0, 21.5):
        confirming.update(estimate(t, 0.9, 0.9))
    assert confirming.tick(27.0).step.terminated  # applied after the wait: one decision, unlabelled
    confirming.close()

    plain = TaskMonitor(MonitorConfig(success_k=2, success_n=3, log_directory=str(directory),
                                      stall_window_s=1.0))
    plain.start_episode(build_task(TWO), 30.0, episode_id="late_veto")
    for t in (31.0, 31.5, 32.0, 32.5):
        plain.update(estimate(t, 0.9, 0.9))
    assert not plain.running
    plain.start_episode(build_task(ONE), 40.0, episode_id="missed")
    # The late veto of late_veto's last stage sits in missed's log.
    assert plain.operator_verdict(40.0, Verdict.NOT_YET, "carol", episode_id="late_veto").label.late
    for t in (41.0, 41.5, 42.5, 43.5):
        plain.update(estimate(t, 0.3, 0.1))  # a stall alert nobody dismisses
    assert not plain.operator_verdict(43.5, Verdict.NOT_YET, "bob").accepted  # nothing to veto
    assert plain.operator_verdict(43.5, Verdict.SUCCESS, "alice").accepted
    plain.start_episode(build_task(ONE), 50.0, episode_id="failed")
    for t in (50.5, 51.0, 52.0, 53.0):
        plain.update(estimate(t, 0.3, 0.1))
    assert plain.dismiss_alert(53.0, "", 0, "alice", "it was thinking").accepted
    assert plain.set_intervention(53.0, True, "alice", "teleop").accepted
    for t in (54.0, 55.0, 56.0, 57.0):
        plain.update(estimate(t, 0.3, 0.1))
    assert plain.set_intervention(57.0, False, "alice").accepted
    assert plain.operator_verdict(57.0, Verdict.FAILURE, "alice").accepted
    plain.close()


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("episodes")
    _write_logs(directory)
    return directory


def test_each_decision_is_counted_against_the_operator_per_episode_and_stage(logs):
    result = operator_agreement([str(logs)])
    episodes = {e["episode_id"]: e for e in result["episodes"]}
    assert {name: e["stage_results"] for name, e in episodes.items()} == {
        "confirmed": [(1, "tp")], "vetoed": [(1, "fp")], "unanswered": [(1, "unlabelled")],
        "late_veto": [(1, "unlabelled"), (2, "fp")], "missed": [(1, "fn")], "failed": [(1, "tn")]}
    assert [d["how"] for d in episodes["unanswered"]["decisions"]] == ["pending"]
    assert episodes["late_veto"]["decisions"][1]["vetoed"] == "late not_yet by carol"
    assert episodes["confirmed"]["decisions"][0]["confirmed_by"] == "alice"
    assert [e["duration_s"] for e in result["episodes"]] == pytest.approx([1.5, 2.0, 7.0, 2.5, 3.5, 7.0])
    pooled = result["pooled"]
    assert pooled["counts"] == {"tp": 1, "fp": 2, "fn": 1, "tn": 1, "unlabelled": 2}
    assert pooled["precision"] == pytest.approx(1 / 3) and pooled["recall"] == pytest.approx(0.5)
    assert pooled["f1"] == pytest.approx(0.4)
    assert pooled["by_stage"]["2"]["fp"] == 1 and pooled["by_stage"]["2"]["recall"] is None
    assert pooled["by_stage"]["2"]["f1"] is None  # recall undefined: no F1, no division by zero


def test_a_veto_wins_over_a_confirmation_and_a_failure_verdict_against_a_success_is_a_veto(tmp_path):
    confirming = TaskMonitor(MonitorConfig(success_k=2, success_n=3, log_directory=str(tmp_path),
                                           confirm_decisions=True))
    confirming.start_episode(build_task(ONE), 0.0, episode_id="changed_mind")
    for t in (1.0, 1.5):
        confirming.update(estimate(t, 0.9, 0.9))
    assert confirming.operator_verdict(1.5, Verdict.SUCCESS, "alice", wall=100.0).accepted
    confirming.start_episode(build_task(ONE), 10.0, episode_id="overridden")
    late = confirming.operator_verdict(10.0, Verdict.NOT_YET, "bob", episode_id="changed_mind", wall=110.0)
    assert late.label.late
    for t in (11.0, 11.5):
        confirming.update(estimate(t, 0.9, 0.9))
    assert confirming.operator_verdict(11.5, Verdict.FAILURE, "bob").accepted  # while it is pending
    # Agreeing with a failure afterwards judges no success decision: kept, not scored.
    assert confirming.operator_verdict(12.0, Verdict.FAILURE, "carol").label.late
    confirming.close()
    plain = TaskMonitor(MonitorConfig(success_k=2, success_n=3, log_directory=str(tmp_path)))
    plain.start_episode(build_task(ONE), 20.0, episode_id="late_failure")
    for t in (21.0, 21.5):
        plain.update(estimate(t, 0.9, 0.9))
    assert plain.operator_verdict(22.0, Verdict.FAILURE, "carol").label.late
    plain.close()
    result = operator_agreement([str(tmp_path)])
    assert {e["episode_id"]: [d["vetoed"] for d in e["decisions"]] for e in result["episodes"]} == {
        "changed_mind": ["late not_yet by bob"], "overridden": ["overridden by bob's failure verdict"],
        "late_failure": ["late failure verdict by carol"]}
    pooled = result["pooled"]
    assert pooled["counts"] == {"tp": 0, "fp": 3, "fn": 0, "tn": 0, "unlabelled": 0}
    assert pooled["precision"] == 0.0 and pooled["recall"] is None and pooled["f1"] is None
    assert pooled["unscored_late_labels"] == 1


def test_vetoes_false_alarms_takeovers_refusals_and_sources(logs):
    result = operator_agreement([str(logs)])
    pooled = result["pooled"]
    assert pooled["episode_s"] == pytest.approx(EPISODE_S)
    assert pooled["vetoes"]["applied"] == 1 and pooled["vetoes"]["late"] == 1  # bob's refused one is none
    assert pooled["vetoes"]["per_hour"] == pytest.approx(2 / (EPISODE_S / 3600.0))
    assert pooled["false_alarms"] == {"alerts": 2, "dismissed": 1, "share": 0.5,
                                      "by_kind": {"stall": {"alerts": 2, "dismissed": 1}}}
    assert pooled["takeovers"]["count"] == 1 and pooled["takeovers"]["seconds"] == pytest.approx(4.0)
    assert pooled["takeovers"]["share"] == pytest.approx(4.0 / EPISODE_S)
    assert pooled["takeovers"]["per_episode"] == pytest.approx(1 / 6)
    assert pooled["refused"] == 1
    assert pooled["labels_by_source"] == {"alice": {"applied": 8, "late": 0, "refused": 0},
                                          "bob": {"applied": 0, "late": 0, "refused": 1},
                                          "carol": {"applied": 0, "late": 1, "refused": 0}}


def test_the_eval_command_prints_the_table_and_writes_json_and_markdown(logs, tmp_path, capsys):
    out = tmp_path / "eval"
    assert main(["eval", "--operator-logs", str(logs), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in printed.splitlines() if line.strip()}
    assert rows["1"] == ["1", "1", "1", "1", "1", "2", "0.500", "0.500", "0.500"]
    assert rows["2"] == ["2", "0", "1", "0", "0", "0", "0.000", "n/a", "n/a"]
    assert rows["all"] == ["all", "1", "2", "1", "1", "2", "0.333", "0.500", "0.400"]
    assert rows["late_veto"][:10] == ["late_veto", "succeeded", "model", "2.5", "s", "0", "1", "0", "0", "1"]
    assert "2 (1 applied, 1 late), 306.4 per hour of episode time" in printed
    assert "1 of 2 task-failure alert(s) dismissed (50.0 %): stall 1/2" in printed
    assert "4.0 s under a takeover (17.0 % of episode time)" in printed
    assert "alice (8 applied); bob (1 refused); carol (1 late)" in printed
    # The columns line up: every cell of the decision table ends where its header does.
    table = [line for line in printed.splitlines() if line.split()[:1] in (["stage"], ["1"], ["all"])]
    assert len({len(line) for line in table}) == 1
    written = json.loads((out / "operator_agreement.json").read_text())
    assert written["pooled"]["counts"] == {"tp": 1, "fp": 2, "fn": 1, "tn": 1, "unlabelled": 2}
    assert written["pooled"]["vetoes"]["total"] == 2 and len(written["episodes"]) == 6
    markdown = (out / "operator_agreement.md").read_text()
    assert "| all | 1 | 2 | 1 | 1 | 2 | 0.333 | 0.500 | 0.400 |" in markdown


def test_a_torn_log_without_summary_still_reports_and_a_corrupt_one_is_skipped(tmp_path, capsys):
    logs = tmp_path / "episodes"
    monitor = TaskMonitor(MonitorConfig(success_k=2, success_n=3, log_directory=str(logs)))
    monitor.start_episode(build_task(ONE), 100.0, episode_id="cut")
    monitor.update(estimate(101.0, 0.3, 0.1))
    assert monitor.set_intervention(101.0, True, "alice").accepted
    for t in (102.0, 103.5):
        monitor.update(estimate(t, 0.3, 0.1))
    monitor.close()  # killed while running: no summary, and a torn last line
    with open(monitor.log_path, "ab") as handle:
        handle.write(b'{"type": "estimate", "stamp": 104.')
    (logs / "episode_broken.jsonl").write_text('not json\n{"type": "header"}\n')
    assert main(["eval", "--operator-logs", str(logs), "--out", str(tmp_path / "eval")]) == 0
    printed = capsys.readouterr().out
    assert "note: cut: no summary" in printed and "episode_broken.jsonl skipped" in printed
    (cut,) = json.loads((tmp_path / "eval" / "operator_agreement.json").read_text())["episodes"]
    assert not cut["has_summary"] and cut["status"] == "no summary"
    assert cut["duration_s"] == pytest.approx(3.5)  # last stamp - header start_stamp
    assert cut["takeovers"] == 1 and cut["takeover_s"] == pytest.approx(2.5)  # still active at the end


def test_eval_with_replays_and_operator_logs_writes_both_reports(logs, tmp_path, capsys):
    from robot_recordings import ramp, write_recording
    bag = write_recording(str(tmp_path / "bag"), {"/scene/image_raw": "rgb8"}, [("pick", ramp(8))])
    replayed, out = str(tmp_path / "replay"), tmp_path / "eval"
    assert main(["replay", bag, "--out", replayed, "--instruction-topic", "/task", "--backend",
                 "pixel_scripted", "--model", "scripted", "-p", "model.plugin_modules=scripted_backend",
                 "--no-plots", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["eval", replayed, "--operator-logs", str(logs), "--out", str(out), "--no-preference"]) == 0
    printed = capsys.readouterr().out
    assert printed.index("| metric | value |") < printed.index("Model success decisions against the operator")
    assert (out / "metrics.json").is_file() and (out / "report.md").is_file()
    assert json.loads((out / "operator_agreement.json").read_text())["pooled"]["episodes"] == 6


def test_eval_needs_replays_or_operator_logs_and_names_a_missing_folder(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["eval"])
    assert exited.value.code == 2 and "--operator-logs" in capsys.readouterr().err
    assert main(["eval", "--operator-logs", str(tmp_path / "nope"), "--out", str(tmp_path / "e")]) == 1
    assert "no such folder of episode logs" in capsys.readouterr().err
