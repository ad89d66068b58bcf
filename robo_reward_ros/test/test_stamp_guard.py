# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Frame stamps: odd ones refused, a new timeline recognised only when it persists."""
from robo_reward_ros.core.stamp_guard import StampGuard, StampVerdict


def verdicts(guard, stamps):
    return [guard.check(s).verdict for s in stamps]


def test_forward_stamps_are_accepted_and_zero_refused():
    guard = StampGuard(max_jump_sec=5.0, confirm_frames=3)
    assert verdicts(guard, [10.0, 10.1, 10.1, 14.9]) == [StampVerdict.ACCEPT] * 4
    check = guard.check(0.0)
    assert check.verdict is StampVerdict.REJECT and "zero stamp" in check.reason


def test_a_timeline_may_start_at_zero_but_an_unstamped_camera_is_refused():
    """Check that a recording (a bag, a rendered episode) may start at 0.0, an unstamped driver not.

    A driver that never stamps sends 0.0 again and again: its first frame passes, every later one
    is refused.
    """
    assert verdicts(StampGuard(), [0.0, 0.1, 0.2]) == [StampVerdict.ACCEPT] * 3
    unstamped = StampGuard()
    assert verdicts(unstamped, [0.0, 0.0, 0.0]) == [StampVerdict.ACCEPT] + [StampVerdict.REJECT] * 2
    assert verdicts(StampGuard(), [-1.0]) == [StampVerdict.REJECT]


def test_one_stamp_back_or_far_ahead_is_refused_and_the_stream_goes_on():
    guard = StampGuard(max_jump_sec=5.0, confirm_frames=3)
    guard.check(100.0)
    back = guard.check(99.0)
    assert back.verdict is StampVerdict.REJECT and "went back 1.000 s" in back.reason
    ahead = guard.check(1000.0)
    assert ahead.verdict is StampVerdict.REJECT and "jumped 900.0 s ahead" in ahead.reason
    assert guard.check(100.1).verdict is StampVerdict.ACCEPT
    assert guard.last == 100.1


def test_a_persistent_new_timeline_is_adopted_after_confirm_frames():
    guard = StampGuard(max_jump_sec=5.0, confirm_frames=3)
    verdicts(guard, [500.0, 500.1, 500.2])
    looped = verdicts(guard, [1.0, 1.1, 1.2, 1.3])  # a bag that started over
    assert looped == [StampVerdict.REJECT, StampVerdict.REJECT, StampVerdict.NEW_TIMELINE,
                      StampVerdict.ACCEPT]
    assert guard.last == 1.3


def test_scattered_bad_stamps_never_make_a_timeline():
    guard = StampGuard(max_jump_sec=5.0, confirm_frames=3)
    guard.check(50.0)
    for bad in (1.0, 900.0, 3.0, 700.0, 5.0, 300.0):
        assert guard.check(bad).verdict is StampVerdict.REJECT
    assert guard.last == 50.0


def test_the_same_odd_stamp_repeated_is_no_new_timeline():
    guard = StampGuard(max_jump_sec=5.0, confirm_frames=3)
    guard.check(50.0)
    assert verdicts(guard, [900.0] * 10) == [StampVerdict.REJECT] * 10


def test_after_a_caller_starts_an_episode_the_next_frame_may_be_any_time_ahead_but_not_back():
    """A lock-step controller that paused (fine-tuning, a scene reset) sends one frame and waits.

    Before: that frame was refused as a jump, and so was every later one (each came after the
    controller's step timeout, never the run of frames a new timeline needs): the controller hung.
    """
    guard = StampGuard(max_jump_sec=5.0, confirm_frames=3)
    verdicts(guard, [100.0, 100.1])
    guard.expect_gap()
    assert guard.check(99.0).verdict is StampVerdict.REJECT  # back is still refused, the gap still allowed
    assert guard.check(700.0).verdict is StampVerdict.ACCEPT and guard.last == 700.0
    assert guard.check(700.1).verdict is StampVerdict.ACCEPT
    assert guard.check(1400.0).verdict is StampVerdict.REJECT  # once: the next jump needs another start
