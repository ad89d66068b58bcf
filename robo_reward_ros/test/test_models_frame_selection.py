# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
import pytest

from robo_reward_ros.models.backends.frame_selection import linspace_indices, select_frames, tail_indices


def test_linspace_keeps_first_and_last_and_rounds_like_upstream():
    # linspace(0, 9, 8) = 0, 1.29, 2.57, 3.86, 5.14, 6.43, 7.71, 9
    assert linspace_indices(10, 8) == [0, 1, 3, 4, 5, 6, 8, 9]


def test_linspace_rounds_half_to_even():
    # linspace(0, 5, 3) = 0, 2.5, 5 -> np.rint gives 2, not 3
    assert linspace_indices(6, 3) == [0, 2, 5]


def test_many_frames_give_count_sorted_indices():
    indices = linspace_indices(1000, 8)
    assert len(indices) == 8 and indices[0] == 0 and indices[-1] == 999
    assert all(a <= b for a, b in zip(indices, indices[1:]))


def test_fewer_frames_are_right_padded_with_the_last():
    assert select_frames(["a", "b", "c"], 8, pad=True) == ["a", "b", "c"] + ["c"] * 5


def test_single_frame_count_takes_the_last():
    assert select_frames(list("abcdef"), 1) == ["f"]


def test_tail_mode_keeps_newest():
    assert tail_indices(10, 8) == list(range(2, 10))
    assert select_frames(list(range(10)), 8, mode="tail") == list(range(2, 10))


def test_short_windows_stay_short_by_default():
    """The published inference code and LeRobot pass a short window as it is."""
    assert select_frames([1, 2], 8) == [1, 2]
    assert select_frames([1, 2], 8, mode="tail") == [1, 2]


def test_bad_mode_is_rejected():
    with pytest.raises(ValueError, match="mode"):
        select_frames([1, 2, 3], 2, mode="random")
