# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The task services' change budget: a token bucket, counted."""
import pytest

from robo_reward_ros.core.call_budget import CallBudget
from robo_reward_ros.core.frame_intake import ManualClock


def test_a_burst_is_taken_then_the_rate_and_the_rest_is_refused_and_counted():
    clock = ManualClock(0.0)
    budget = CallBudget(rate=10.0, burst=3, clock=clock)
    assert [budget.take() for _ in range(5)] == [True, True, True, False, False]
    clock.now += 0.1  # one change's worth of time
    assert [budget.take(), budget.take()] == [True, False]
    clock.now += 10.0  # a long quiet spell refills to the burst, not beyond
    assert [budget.take() for _ in range(4)] == [True, True, True, False]
    assert (budget.served, budget.refused) == (7, 4)
    assert budget.busy_reason().startswith("busy: more than 10 task/episode changes per second")


@pytest.mark.parametrize("rate, burst", [(0.0, 1), (1.0, 0), (-1.0, 2)])
def test_a_budget_that_takes_nothing_is_refused(rate, burst):
    with pytest.raises(ValueError):
        CallBudget(rate, burst)
