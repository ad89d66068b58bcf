# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The README's first command: from an empty cache the demo runs, reads well and stops cleanly.

It builds its tiny checkpoint and episode bags, runs the reward node and a camera process playing
two episodes (a Meta-World one and a real robot clip when the data is here, else a second
Meta-World one), prints the compact console of issue 18 (a header per episode, state lines only
on a change, no stale camera between the demo's own episodes, a summary table with the figures
``robo-reward eval`` computes), and writes logs and plots. ``--verbose`` prints every message.
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading

import pytest


def _demo_command(tmp_path, *args):
    """Return the demo's command line and environment, with its cache in the test's folder."""
    return ([sys.executable, "-m", "robo_reward_ros.demo", *args],
            {**os.environ, "ROBO_REWARD_CACHE": str(tmp_path / "cache")})


def _demo(tmp_path, *args, timeout=300):
    argv, env = _demo_command(tmp_path, *args)
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)


def _summary_rows(stdout):
    """Return the summary table's rows by episode name: their cells (split on runs of 2+ spaces)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("demo: summary"))
    header, rule = lines[start + 1], lines[start + 2]
    assert header.split()[:2] == ["episode", "truth"] and set(rule) <= {"-", " "}
    rows = {}
    for line in lines[start + 3:]:
        if line.startswith("demo: "):
            break
        cells = re.split(r" {2,}", line.strip())
        rows[cells[0]] = cells
    return rows


def test_demo_streams_sim_and_real_episodes_and_writes_logs_and_plots(tmp_path):
    pytest.importorskip("rosbags", reason="rosbags is not installed")
    from robo_reward_ros.simulation.demo_assets import robot_clips_dir
    clips = 1 if robot_clips_dir() else 0
    scenarios = ["pick_place_dropped"] + ([] if clips else ["pick_place_expert"])
    out = tmp_path / "out"
    result = _demo(tmp_path, *[a for s in scenarios for a in ("--scenario", s)],
                   "--clips", str(clips), "--out", str(out))
    stdout = result.stdout
    assert result.returncode == 0, stdout + result.stderr
    from robo_reward_ros.models.loading.bundled_demo import trained_model_source
    if trained_model_source():
        assert "TRAINED HERE with robo-reward finetune" in stdout
    else:
        assert "TINY checkpoint with RANDOM weights" in stdout
    assert "exit codes [0, 0]" in stdout
    assert "ros2 launch robo_reward_ros reward.launch.py" in stdout  # the real-model line
    with open(out / "episodes.json") as handle:
        episodes = {e["name"]: e for e in json.load(handle)["episodes"]}
    names = list(episodes)
    assert len(episodes) == 2 and names[0] == "pick_place_dropped"
    assert episodes["pick_place_dropped"]["outcome"] == "failure"
    assert episodes["pick_place_dropped"]["estimates"] > 3

    # The compact console: a header per episode with its task and truth, one line per estimate.
    lines = stdout.splitlines()
    headers = [line for line in lines if line.startswith("== episode")]
    assert headers == [f"== episode {i + 1}/2: {name} ==" for i, name in enumerate(names)], stdout
    first = lines.index(headers[0])
    assert lines[first + 1] == "   task: 'pick up the puck and place it at the goal'"
    assert lines[first + 2].startswith("   truth: failure (drop), from ")
    assert re.search(r"^ +\d+\.\d s  stage 1/1  progress \d\.\d{3} ", stdout, re.M), stdout
    # State lines only on a change (the node republishes 'running' after every event), no
    # 'stage 1/0' for idle, no raw message dumps, no /diagnostics while its level stays OK.
    blocks = re.split(r"^== episode .*$", stdout, flags=re.M)[1:]
    assert [block.count("running stage 1/1") for block in blocks] == [1, 1], stdout
    assert "stage 1/0" not in stdout and "task_state:" not in stdout and "reward: " not in stdout
    assert sum(line.startswith("diagnostics:") for line in lines) == 0
    # The demo's pause between its episodes is no camera fault: not printed, not recorded.
    assert "camera_stale" not in stdout
    with open(out / "events.jsonl") as handle:
        kinds = [json.loads(line).get("kind") for line in handle if line.strip()]
    assert "camera_stale" not in kinds, kinds

    # The summary table holds what robo-reward eval computes from the same folder.
    evaluated = subprocess.run([sys.executable, "-m", "robo_reward_ros.cli.main", "eval", str(out),
                                "--no-preference", "--out", str(tmp_path / "eval")],
                               capture_output=True, text=True, timeout=120)
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    with open(tmp_path / "eval" / "metrics.json") as handle:
        report = json.load(handle)
    table = _summary_rows(stdout)
    assert sorted(table) == sorted(names)
    for row in report["episodes"]:
        cells = table[row["name"]]
        assert cells[4] == f"{row['final_progress']:.3f}", (cells, row)
        decided = row["first_failure_stamp"] is not None or row["detected_success_stamp"] is not None
        assert (cells[2] == "none") == (not decided), (cells, row)
        if row["first_failure_stamp"] is not None:
            assert f"{row['first_failure_kind']} at {row['first_failure_stamp']:.1f} s" in cells[2]
    dropped = table["pick_place_dropped"]
    assert dropped[1] == "failure (drop)"
    delay = report["metrics"]["failure_detection_delay_s"]
    if delay["n"]:  # the node flagged the drop: its delay is the one eval averages (one failure)
        assert dropped[3].split()[0] == f"{delay['mean']:+.2f}", (dropped, delay)
    else:
        assert dropped[3] == "n/a"
    for name in names:
        assert (out / "plots" / f"{name}.png").stat().st_size > 1000
    assert any(p.name.startswith("episode_pick_place_dropped")
               for p in (out / "episode-logs").iterdir())

    # --verbose prints every message as it comes: the /diagnostics arrays, once a second while
    # the node loads its model. Read until two are shown, then stop the demo with a Ctrl-C, as a
    # person would: it stops its node and camera and exits cleanly.
    argv, env = _demo_command(tmp_path, "--verbose", "--scenario", "pick_place_dropped",
                              "--clips", "0", "--out", str(tmp_path / "verbose"))
    verbose = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=env)
    watchdog = threading.Timer(180, verbose.kill)  # a hung demo fails here, not at pytest's limit
    watchdog.start()
    printed, shown = [], 0
    try:
        for line in verbose.stdout:
            printed.append(line)
            shown += line.startswith("diagnostics: /reward_node: model:")
            if shown == 2:
                verbose.send_signal(signal.SIGINT)
                break
        printed += verbose.stdout.readlines()
        code = verbose.wait()
    finally:
        watchdog.cancel()
        verbose.kill()
    assert shown == 2, "".join(printed)
    assert code == 0 and "exit codes [0, 0]" in "".join(printed), "".join(printed)
