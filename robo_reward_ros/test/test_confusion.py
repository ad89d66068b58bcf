# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward eval --confusion``: the column-normalised diagonal mean, by hand and through the command.

The maths on a 3 x 3 matrix worked out on paper; a model blind to the instruction (the scripted
backend reads only pixels) sits exactly at chance 1/K; the command writes the table, the plot and
the figures with a floor model (the tiny random Robometer checkpoint) or says why it has none.
"""
import json
import math
import os

import numpy as np
import pytest

from robo_reward_ros.cli.evaluate import main
from robo_reward_ros.evaluation.confusion import column_normalised, diagonal_mean, grouped_matrix

pytest.importorskip("av", reason="PyAV is not installed")
pytest.importorskip("pyarrow", reason="pyarrow is not installed")

SCRIPTED = ["--backend", "pixel_scripted", "--model", "scripted", "-p", "model.plugin_modules=scripted_backend",
            "--quiet"]
TASKS = ("open the drawer", "close the drawer", "press the button")


def test_diagonal_mean_of_a_hand_checked_matrix():
    matrix = [[0.9, 0.2, 0.1],
              [0.3, 0.6, 0.1],
              [0.0, 0.2, 0.8]]
    # Column sums 1.2, 1.0, 1.0: the diagonal normalised is 0.9/1.2 = 0.75, 0.6 and 0.8.
    assert np.allclose(np.diag(column_normalised(matrix)), [0.75, 0.6, 0.8])
    assert diagonal_mean(matrix) == pytest.approx((0.75 + 0.6 + 0.8) / 3)
    assert np.allclose(column_normalised(matrix).sum(axis=0), 1.0)
    blind = [[0.2] * 3, [0.5] * 3, [0.9] * 3]  # each video's score whatever the instruction
    assert diagonal_mean(blind) == pytest.approx(1 / 3)
    assert diagonal_mean(np.eye(3)) == 1.0
    assert math.isnan(column_normalised([[0.0, 1.0], [0.0, 1.0]])[0, 0])  # a column of zeros says nothing
    with pytest.raises(ValueError, match=">= 0"):
        column_normalised([[-0.1, 1.0], [0.2, 0.3]])
    with pytest.raises(ValueError, match="square"):
        diagonal_mean([[0.1, 0.2]])


def test_episodes_sharing_an_instruction_are_one_row():
    def row(episode, own, asked, value):
        return {"source": "/d", "episode": episode, "own_instruction": own, "instruction": asked,
                "final_progress": value}
    rows = [row("0", "a", "a", 0.8), row("0", "a", "b", 0.2), row("1", "a", "a", 0.6), row("1", "a", "b", 0.4),
            row("2", "b", "a", 0.1), row("2", "b", "b", 0.9)]
    names, counts, matrix = grouped_matrix(rows)
    assert names == ["a", "b"] and counts == [2, 1]
    assert np.allclose(matrix, [[0.7, 0.3], [0.1, 0.9]])
    assert diagonal_mean(matrix) == pytest.approx((0.7 / 0.8 + 0.9 / 1.2) / 2)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Write a LeRobot set of three tasks, two episodes of the first, painted with different progress."""
    from lerobot_datasets import write_v3_dataset
    ramps = [(task, [(0.1 + k * 0.2 + 0.05 * i, 0.05) for i in range(6)])
             for k, task in enumerate(TASKS + (TASKS[0],))]
    return write_v3_dataset(str(tmp_path_factory.mktemp("ds") / "three_tasks"), ramps,
                            keys=("observation.images.top",))


def test_a_blind_model_sits_at_chance_and_a_plugin_has_no_floor(dataset, tmp_path, capsys):
    out = str(tmp_path / "confusion")
    status = main(["--confusion", dataset, "--out", out, *SCRIPTED])
    printed, err = capsys.readouterr()
    assert status == 0, err
    assert "confusion: 4 episode(s), 3 instructions (chance 1/3 = 0.333)" in printed
    assert "column-normalised diagonal mean 0.333" in printed
    assert "floor: not computed: no tiny random checkpoint is built for the pixel_scripted backend" in printed
    summary = json.load(open(os.path.join(out, "confusion.json")))
    assert summary["model"]["diagonal_mean"] == pytest.approx(1 / 3, abs=1e-9)
    assert summary["model"]["episodes_per_instruction"] == {TASKS[0]: 2, TASKS[1]: 1, TASKS[2]: 1}
    assert "floor" not in summary
    import pyarrow.parquet as pq
    table = pq.read_table(os.path.join(out, "confusion.parquet")).to_pylist()
    assert len(table) == 9 and {r["model"] for r in table} == {"model"}
    cell = next(r for r in table if r["video_instruction"] == TASKS[0] and r["instruction"] == TASKS[1])
    # Episodes 0 and 3 end at 0.1 + 0.25 and 0.7 + 0.25 (red, rounded by the video codec).
    assert cell["episodes"] == 2 and cell["mean_score"] == pytest.approx((0.35 + 0.95) / 2, abs=0.02)
    assert os.path.getsize(os.path.join(out, "confusion.png")) > 10_000


def test_the_command_writes_table_and_plot_with_a_floor(dataset, tiny_robometer_dir, tmp_path, capsys):
    out = str(tmp_path / "confusion")
    status = main(["--confusion", dataset, "--out", out, "--model", tiny_robometer_dir,
                   "--floor-model", tiny_robometer_dir, "--quiet"])
    printed, err = capsys.readouterr()
    assert status == 0, err
    summary = json.load(open(os.path.join(out, "confusion.json")))
    model, floor = summary["model"]["diagonal_mean"], summary["floor"]["diagonal_mean"]
    assert 0.0 < model < 1.0 and model == pytest.approx(floor)  # the same checkpoint twice
    assert f"column-normalised diagonal mean {model:.3f}: auto {tiny_robometer_dir} fp32\n" in printed
    assert f"floor: {floor:.3f}: auto {tiny_robometer_dir} fp32 (--floor-model {tiny_robometer_dir})" in printed
    with open(os.path.join(out, "confusion.csv")) as handle:
        lines = handle.read().splitlines()
    assert lines[0] == "model,video_instruction,episodes,instruction,mean_score,column_normalised"
    assert len(lines) == 1 + 2 * 9
    assert os.path.isfile(os.path.join(out, "confusion_model_episodes.csv"))
    assert os.path.getsize(os.path.join(out, "confusion.png")) > 10_000


def test_floor_model_choices(tiny_robometer_dir):
    from robo_reward_ros.replay.rank_run import floor_model, model_values
    values = model_values(tiny_robometer_dir, log=lambda _: None)[0]
    assert floor_model(values, "none") == (None, "", "no floor asked for (--floor-model none)")
    assert floor_model(values, "/some/dir") == ("/some/dir", "", "--floor-model /some/dir")
    scripted = model_values("scripted", "pixel_scripted", params=["model.plugin_modules=scripted_backend"],
                            log=lambda _: None)[0]
    checkpoint, backend, why = floor_model(scripted, "tiny-random")
    assert checkpoint is None and "no tiny random checkpoint is built for the pixel_scripted backend" in why


def test_one_instruction_is_refused_in_one_line(tmp_path, capsys):
    from lerobot_datasets import write_v3_dataset
    single = write_v3_dataset(str(tmp_path / "one_task"), [(TASKS[0], [(0.2, 0.1)] * 3)] * 2,
                              keys=("observation.images.top",))
    assert main(["--confusion", single, "--out", str(tmp_path / "c"), *SCRIPTED]) == 1
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "needs episodes of at least 2 different instructions" in err
