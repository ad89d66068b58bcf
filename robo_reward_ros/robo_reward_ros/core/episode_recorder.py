# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The episode log as the monitor keeps it: a header, every event and estimate, a summary last.

The monitor decides and this writes, best effort (``best_effort_log.py``): a log that cannot be
written never stops scoring, decisions or resets. The summary counts what the events it recorded
say (failures by kind, stages completed), so the monitor keeps no second count of them.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Dict, Optional

from robo_reward_ros.core.best_effort_log import BestEffortEpisodeLog, LogHealth
from robo_reward_ros.core.events import EpisodeEnded, FailureDetected, MonitorEvent, RewardEstimate
from robo_reward_ros.core.monitor_config import MonitorConfig
from robo_reward_ros.core.monitor_update import MonitorState
from robo_reward_ros.core.task_spec import TaskSpec


class EpisodeRecorder:
    """One monitor's episode logs; with no directory (logging off) it records nothing."""

    def __init__(self, directory: Optional[str], fsync_estimates: bool = False) -> None:
        self.log = None if directory is None else BestEffortEpisodeLog(directory, fsync_estimates)
        self.path: Optional[str] = None  # the log of the current or last episode
        self._failures_by_kind: Dict[str, int] = {}
        self._stages_completed = 0

    @property
    def health(self) -> Optional[LogHealth]:
        return None if self.log is None else self.log.health

    def take_over(self, previous: EpisodeRecorder) -> None:
        """Continue ``previous``'s logs, whose waiting records stay; ``previous`` records nothing more."""
        if previous.log is not None:
            self.log, previous.log = previous.log, None
            self.path = previous.path

    def open(self, episode_id: str, start_stamp: float, task: TaskSpec, config: MonitorConfig) -> None:
        """Start the episode's log with its header: the task and the rules it runs under."""
        self._failures_by_kind = {}
        self._stages_completed = 0
        if self.log is None:
            return
        self.path = self.log.open(episode_id)
        rules: Dict[str, Any] = dataclasses.asdict(config)
        rules["camera_rule"] = config.camera_rule.value
        rules["reward_mode"] = config.reward_mode.value
        rules["terminal_failures"] = sorted(k.name.lower() for k in config.terminal_failures)
        self.log.write_event({
            "type": "header",
            "episode_id": episode_id,
            "start_stamp": start_stamp,
            "stages": [dataclasses.asdict(s) for s in task.stages],
            "episode_timeout_sec": task.episode_timeout_sec,
            "config": rules,
            "pid": os.getpid(),
        })

    def event(self, event: MonitorEvent) -> Any:
        """Record ``event`` and return it."""
        if self.log is None:
            return event
        if isinstance(event, FailureDetected):
            name = event.kind.name.lower()
            self._failures_by_kind[name] = self._failures_by_kind.get(name, 0) + 1
        elif isinstance(event, EpisodeEnded):
            self._stages_completed = event.stages_completed
        self.log.write_event(event.to_record())
        return event

    def estimate(self, estimate: RewardEstimate, accepted: bool, stage_index: int) -> None:
        if self.log is not None:
            record = estimate.to_record()
            record["accepted"] = accepted
            record["stage_index"] = stage_index
            self.log.write_estimate(record)

    def summary(self, state: MonitorState, final_reward: Optional[float]) -> None:
        """Write what became of the episode (``final_reward`` None: aborted, nothing earned)."""
        if self.log is None:
            return
        self.log.write_event({
            "type": "summary",
            "episode_id": state.episode_id,
            "status": int(state.status),
            "status_name": state.status.name,
            "reason": state.reason,
            "start_stamp": state.episode_start_stamp,
            "end_stamp": state.stamp,
            "duration_s": state.stamp - state.episode_start_stamp,
            "stages_completed": self._stages_completed,
            "num_stages": state.num_stages,
            "estimates_accepted": state.estimates_accepted,
            "estimates_rejected": state.estimates_rejected,
            "failures_by_kind": dict(self._failures_by_kind),
            "final_reward": final_reward,
            "episode_return": state.episode_return,
            "decided_by": state.decided_by.name.lower(),
            "decider": state.decider,
            "interventions": state.interventions,
            "intervention_s": state.intervention_s,
        })
        # The log stays open until the next episode starts: an operator's late labels of this
        # episode (a verdict, a reset-done) still go into it, after the summary.

    def retry(self) -> str:
        """Write what waits for the disk when a retry is due; return why the log cannot be written ("" if it can)."""
        if self.log is None:
            return ""
        self.log.retry()
        return self.log.health.error

    def finish(self) -> None:
        if self.log is not None:
            self.log.finish()

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
