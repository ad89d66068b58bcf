# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for the person beside the robot: judges the node's pending decisions from a recording's ground truth.

In the demo (and the RL example's loop) nobody sits at a console, but simulated and labelled
episodes know when each stage was really done. This operator confirms a pending success once the
truth says the stage is done and vetoes it before, and confirms a pending failure only when the
episode is a failure from that time on: exactly the labels a person would give, so the loop
(veto, confirmation, who decided) can be shown and tested without one.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from robo_reward_ros.recordings.episode import Episode, truth_at

SOURCE = "scripted-operator"  # its reasons say "(ground truth)"


@dataclasses.dataclass(frozen=True)
class Judgement:
    verdict: str  # "success", "failure" or "not_yet"
    reason: str


def judge_pending(episode: Episode, stage_index: int, success: bool, stamp: float) -> Optional[Judgement]:
    """Judge a decision pending at ``stamp`` (episode time) on stage ``stage_index``; None without ground truth."""
    truth = truth_at(episode, stamp)
    if truth is None:
        return None
    done = truth.stage > stage_index or (truth.stage == stage_index and truth.success)
    stage = f"stage {stage_index + 1}"
    if success:
        if done:
            return Judgement("success", f"{stage} is done at {stamp:.1f} s (ground truth)")
        return Judgement("not_yet", f"{stage} is not done at {stamp:.1f} s (ground truth)")
    failed = episode.outcome == "failure" and (episode.failure_stamp is None or stamp >= episode.failure_stamp)
    if failed:
        return Judgement("failure", f"the episode failed ({episode.failure_kind or 'ground truth'})")
    return Judgement("not_yet", f"{stage} is still going at {stamp:.1f} s (ground truth)")
