# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Task validation: the same refusal whether a task comes from a topic, a service or a bag."""
import math

import pytest

from robo_reward_ros.core.task_spec import InvalidTaskError, build_task


def test_one_stage_task_with_defaults():
    task = build_task(["  pick up the cup "])
    assert task.stage_count == 1
    assert task.stages[0].instruction == "pick up the cup"
    assert task.stages[0].timeout_sec is None and task.stages[0].success_threshold is None
    assert task.episode_timeout_sec is None


def test_limits_zero_means_default_and_values_are_kept():
    task = build_task(["open the drawer", "put the cup in it"], [0.0, 30.0], [0.7, 0.0], 90.0)
    assert [s.timeout_sec for s in task.stages] == [None, 30.0]
    assert [s.success_threshold for s in task.stages] == [0.7, None]
    assert task.episode_timeout_sec == 90.0


@pytest.mark.parametrize("instructions, kwargs, message", [
    ([], {}, "at least one stage"),
    (["ok", " \t\n"], {}, "stage 2 has an empty instruction"),
    ([b"\xff\xfe bad"], {}, "stage 1 instruction is not valid UTF-8"),
    (["ok"], {"stage_timeouts_sec": [-1.0]}, "stage 1 timeout_sec must be a finite number"),
    (["ok"], {"success_thresholds": [1.5]}, "stage 1 success_threshold must be in (0, 1]"),
    (["ok"], {"success_thresholds": [math.nan]}, "stage 1 success_threshold must be a finite"),
    (["ok"], {"episode_timeout_sec": math.inf}, "episode_timeout_sec must be a finite"),
    (["ab\ufffdcd"], {}, "stage 1 instruction holds bytes that are not valid UTF-8"),
    (["x" * 1001], {}, "stage 1 instruction has 1001 characters; at most 1000"),
])
def test_bad_tasks_are_refused_with_the_reason(instructions, kwargs, message):
    with pytest.raises(InvalidTaskError) as error:
        build_task(instructions, **kwargs)
    assert message in str(error.value)


def test_utf8_bytes_are_accepted():
    assert build_task(["öffne die Schublade".encode()]).stages[0].instruction == "öffne die Schublade"


def test_a_task_is_described_in_one_short_line_however_many_stages():
    from robo_reward_ros.core.task_spec import describe_task

    text = describe_task(build_task([f"stage number {i} " + "x" * 900 for i in range(64)]))
    assert len(text) <= 200 and text.startswith("64 stage(s): stage number 0")
    assert describe_task(build_task(["open the drawer"])) == "1 stage(s): open the drawer"


@pytest.mark.parametrize("instruction", ["\u200b" * 5, "\x01\x02\x03", "\u2060\ufeff", " \t\u00a0 "])
def test_an_instruction_with_nothing_visible_is_refused(instruction):
    with pytest.raises(InvalidTaskError, match="no visible character|empty instruction"):
        build_task([instruction])


def test_a_task_in_a_log_line_has_its_control_characters_escaped():
    from robo_reward_ros.core.task_spec import describe_task
    task = build_task(["open\nthe \x1b[31mdrawer\u200b", "ouvrir le tiroir \u00e9"])
    line = describe_task(task)
    assert line == "2 stage(s): open\\nthe \\x1b[31mdrawer\\u200b | ouvrir le tiroir \u00e9"
    assert task.stages[0].instruction == "open\nthe \x1b[31mdrawer\u200b"  # the task itself unchanged
