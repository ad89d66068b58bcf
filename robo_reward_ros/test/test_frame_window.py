# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The frame window: bounded memory, whole-stage coverage, clean restarts."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robo_reward_ros.core.frame_window import Frame, FrameRejected, FrameWindow

PIXELS = np.zeros((2, 2, 3), dtype=np.uint8)


def _frame(stamp):
    return Frame(stamp, PIXELS)


def test_frames_closer_than_the_interval_refresh_the_newest_slot():
    window = FrameWindow(max_frames=8, min_interval_sec=0.5)
    for stamp in (0.0, 0.1, 0.2, 0.6, 0.7):
        window.add(_frame(stamp))
    # 0.1 takes the newest slot; 0.2 and 0.6 replace it (it is < 0.5 s after 0.0); 0.6 is
    # 0.6 s after 0.0, so it stays when 0.7 arrives.
    assert [f.stamp for f in window.snapshot()] == [0.0, 0.6, 0.7]


def test_full_window_thins_and_keeps_first_and_newest():
    window = FrameWindow(max_frames=8, min_interval_sec=0.0)
    for index in range(9):
        window.add(_frame(float(index)))
    assert [f.stamp for f in window.snapshot()] == [0.0, 2.0, 4.0, 6.0, 8.0]


def test_long_stage_stays_bounded_and_covers_the_stage():
    window = FrameWindow(max_frames=16, min_interval_sec=0.1)
    for index in range(30 * 600):  # ten minutes at 30 Hz
        window.add(_frame(index / 30.0))
    stamps = [f.stamp for f in window.snapshot()]
    assert len(stamps) <= 16
    assert stamps[0] == 0.0 and stamps[-1] == pytest.approx((30 * 600 - 1) / 30.0)
    gaps = np.diff(stamps[:-1])
    assert gaps.max() <= 2.5 * gaps.min()  # evenly spread over the whole stage


def test_sliding_window_by_age():
    window = FrameWindow(max_frames=100, min_interval_sec=0.0, max_age_sec=2.0)
    for index in range(50):
        window.add(_frame(index * 0.1))
    stamps = [f.stamp for f in window.snapshot()]
    assert stamps[-1] - stamps[0] <= 2.0 + 1e-9 and stamps[-1] == pytest.approx(4.9)


def test_restart_forgets_frames_and_refuses_frames_of_the_previous_stage():
    window = FrameWindow(max_frames=8, min_interval_sec=0.0)
    for stamp in (1.0, 2.0, 3.0):
        window.add(_frame(stamp))
    generation = window.generation
    window.restart(3.5)
    assert len(window) == 0 and window.generation == generation + 1
    with pytest.raises(FrameRejected, match="previous stage"):
        window.add(_frame(3.2))
    window.add(_frame(3.5))  # the episode start frame belongs to stage 0
    assert [f.stamp for f in window.snapshot()] == [3.5]


def test_next_stage_excludes_the_frame_that_finished_the_previous_one():
    window = FrameWindow(max_frames=8, min_interval_sec=0.0)
    window.restart(7.0, include_start=False)
    with pytest.raises(FrameRejected, match="starts after 7.000 s"):
        window.add(_frame(7.0))
    window.add(_frame(7.1))
    assert [f.stamp for f in window.snapshot()] == [7.1]


def test_stamps_going_back_are_refused():
    window = FrameWindow()
    window.add(_frame(5.0))
    with pytest.raises(FrameRejected, match="went back from 5.000 s to 4.000 s"):
        window.add(_frame(4.0))


@settings(max_examples=200, deadline=None)
@given(max_frames=st.integers(2, 12), interval=st.floats(0.0, 1.0),
       steps=st.lists(st.floats(0.0, 2.0), min_size=1, max_size=200))
def test_window_invariants(max_frames, interval, steps):
    window = FrameWindow(max_frames=max_frames, min_interval_sec=interval)
    stamps = np.cumsum(steps)
    for stamp in stamps:
        window.add(_frame(float(stamp)))
        kept = [f.stamp for f in window.snapshot()]
        assert len(kept) <= max_frames
        assert kept[0] == stamps[0] and kept[-1] == stamp  # stage start and newest always in
        assert all(a <= b for a, b in zip(kept, kept[1:]))
        # Kept frames (all but the newest slot) are at least the base interval apart.
        assert all(b - a >= interval - 1e-9 for a, b in zip(kept[:-1], kept[1:-1]))


def test_a_frame_sent_again_with_the_same_stamp_takes_no_new_slot():
    window = FrameWindow(max_frames=8, min_interval_sec=0.0)
    for stamp in (1.0, 1.5, 1.5, 1.5):
        window.add(_frame(stamp))
    assert [f.stamp for f in window.snapshot()] == [1.0, 1.5]
