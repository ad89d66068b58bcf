# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The verifier's side of the task monitor: a second model's opinion on the decisions the first is unsure of.

Mixed into ``TaskMonitor``. A decision whose deciding value lies in ``verifier_band`` is held
(status PENDING, as for an operator) instead of applied; the pipeline asks the verifier about the
same windows outside its lock and hands the reading to ``verifier_answer``, which confirms (the
decision applies, or waits for an operator in confirmation mode) or vetoes it (the stage goes on,
its success votes and failure clocks start over, as after an operator's veto). The first model
stays the one that decides: the verifier only stops a decision, it never makes one.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from robo_reward_ros.core.events import DecidedBy, TaskStatus, VerifierChecked
from robo_reward_ros.core.monitor_update import MonitorUpdate
from robo_reward_ros.core.operator_labels import PendingDecision


class VerifierInputs:
    """Hold in-band decisions for the verifier and apply its answers."""

    def _second_opinion_wanted(self, success: bool, value: Optional[float]) -> bool:
        wanted = self.config.verify_successes if success else self.config.verify_failures
        low, high = self.config.verifier_band
        return wanted and value is not None and low <= value <= high

    def _await_verifier(self, pending: PendingDecision, value: float) -> None:
        episode = self._episode
        assert episode is not None
        episode.pending = dataclasses.replace(pending, verifier=True, model_value=float(value))
        episode.status = TaskStatus.PENDING
        episode.decide(DecidedBy.MODEL)
        episode.reason = (f"{'success' if pending.success else 'failure'} ({pending.reason}) is in the "
                          f"verifier's band ({value:.2f} in [{self.config.verifier_band[0]:g}, "
                          f"{self.config.verifier_band[1]:g}]): waiting for its second opinion")

    def verifier_question(self) -> Optional[str]:
        """Return the id of the episode whose decision waits for the verifier, or None."""
        episode = self._episode
        if not self.running or episode is None or episode.pending is None or not episode.pending.verifier:
            return None
        return episode.id

    def verifier_answer(self, episode_id: str, value: Optional[float], latency_s: float, backend: str,
                        error: str = "") -> MonitorUpdate:
        """Apply the verifier's reading of the held decision's windows (``value`` None: it failed).

        A failed verifier leaves the first model's decision standing (it was the one that decided),
        with the error in the log. An answer for a decision no longer held (an operator decided
        meanwhile, the episode ended) changes nothing.
        """
        episode = self._episode
        pending = episode.pending if episode is not None else None
        if (not self.running or episode.id != episode_id or pending is None or not pending.verifier):
            return MonitorUpdate((), None, self.state)
        threshold = self.config.verifier_threshold
        if value is None:
            confirmed = True
        else:
            confirmed = value >= threshold if pending.success else value < threshold
        checked = self._recorder.event(VerifierChecked(
            stamp=episode.clock, episode_id=episode.id, stage_index=episode.stage_index,
            success=pending.success, model_value=pending.model_value, value=value, threshold=threshold,
            confirmed=confirmed, latency_s=float(latency_s), backend=backend, error=error))
        now = episode.clock
        said = (f"verifier {backend}: failed ({error}), the model's decision stands" if value is None
                else f"verifier {backend}: {value:.2f} {'>=' if value >= threshold else '<'} {threshold:g}")
        step = pending.step or ((), episode.scored_stage(), episode.last_success_prob, None)
        if not confirmed:
            self._drop_pending(now, f"{'success' if pending.success else 'failure'} ({pending.reason}) "
                                    f"vetoed by the {said}")
            update = self._step_going_on(step)
        elif self.config.confirm_decisions:
            held = dataclasses.replace(pending, verifier=False, stamp=now,
                                       reason=f"{pending.reason}; confirmed by the {said}")
            return MonitorUpdate((checked, self._hold(held, now)), None, self.state)
        else:
            update = self._apply_pending(now, DecidedBy.MODEL, "", f"confirmed by the {said}", step)
        step_with_answer = dataclasses.replace(update.step, verifier=checked) if update.step else None
        return dataclasses.replace(update, events=(checked,) + update.events, step=step_with_answer)
