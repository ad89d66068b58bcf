# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""One episode's spans scored against instructions: the unit of work of ``rank`` and ``eval --confusion``.

Kept apart from the runs (replay/rank_run.py) because a Ray worker (replay/ray_ranking.py) runs
exactly this and nothing else. The model is loaded as the replay loads it, and a span is shown to
it as the node's frame window would hold it (core/frame_window.py: at most ``window.max_frames``,
evenly thinned, the newest frame last), scored with ``score_episode`` (offline: TOPReward may use
hindsight). A window's frames are dropped once it is scored, so memory holds the open windows and
the model, never an episode.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, List, Optional, Tuple

from robo_reward_ros.recordings.episode_sources import EpisodeReader, EpisodeRef, SourceOptions


@dataclasses.dataclass(frozen=True)
class RankJob:
    """What to score each episode for; empty ``instructions``: each episode's own."""

    instructions: Tuple[str, ...] = ()
    window: int = 0  # frames per window; 0: the whole episode
    stride: int = 0  # frames between window starts (default: the window)
    preference: bool = False  # also ask P(span better than the reference clip)
    reference: Optional[EpisodeRef] = None
    sources: SourceOptions = SourceOptions()
    need_success: bool = False  # refuse a model without a success head


class EpisodeScorer:
    """One model and one reader: episode references in, one row per span and instruction out."""

    def __init__(self, values: Dict[str, Any], job: RankJob, model=None, log=print) -> None:
        from robo_reward_ros.replay.offline_replay import OfflineReplay
        replayer = OfflineReplay(values, model)
        self.model, self.settings, self.job = replayer.model, replayer.settings, job
        self._replayer = replayer
        try:
            check_capabilities(self.model, job)
            self.reader = EpisodeReader(job.sources, self.settings.max_pixels)
            self.reference = None
            if job.preference:
                if job.reference is None:
                    raise ValueError("--by preference needs --reference CLIP (a bag, or a LeRobot dataset episode)")
                window = self.settings.window
                self.reference = self.reader.clip(job.reference, window.max_frames, window.min_interval_sec)
        except BaseException:
            replayer.close()
            raise

    def close(self) -> None:
        self._replayer.close()

    def score(self, ref: EpisodeRef) -> List[Dict[str, Any]]:
        """Return the episode's rows: per span (in frame order) and instruction, the model's readings."""
        from robo_reward_ros.core.frame_window import FrameRejected, FrameWindow
        from robo_reward_ros.evaluation.ranking import SpanCutter
        try:
            own = self.reader.instruction(ref)
        except ValueError:  # a recording without an instruction: fine when the instructions are given
            if not self.job.instructions:
                raise
            own = ""
        instructions = self.job.instructions or (own,)
        cutter = SpanCutter(self.job.window, self.job.stride)
        config = self.settings.window
        open_spans: Dict[int, List[Any]] = {}  # start frame -> [window, start stamp]
        rows: List[Dict[str, Any]] = []
        last_end, index, stamp = None, -1, 0.0
        for index, frame in enumerate(self.reader.frames(ref)):
            stamp = frame.stamp
            if cutter.opens_at(index):
                open_spans[index] = [FrameWindow(config.max_frames, config.min_interval_sec), stamp]
            for start in sorted(open_spans):
                try:
                    open_spans[start][0].add(frame)
                except FrameRejected as exc:
                    raise ValueError(f"{ref.source}: episode {ref.episode}, frame {index}: {exc}") from None
                if cutter.complete(start, index):
                    window, start_stamp = open_spans.pop(start)
                    rows += self._span_rows(ref, own, instructions, start, index + 1, start_stamp, stamp,
                                            window.snapshot())
                    last_end = index + 1
        length = index + 1
        if length == 0:
            raise ValueError(f"{ref.source}: episode {ref.episode} has no frames")
        for start in cutter.partial_kept(list(open_spans), length, last_end):
            window, start_stamp = open_spans[start]
            rows += self._span_rows(ref, own, instructions, start, length, start_stamp, stamp, window.snapshot())
        rows.sort(key=lambda r: (r["start_frame"], instructions.index(r["instruction"])))
        return rows

    def _span_rows(self, ref, own, instructions, start, end, start_stamp, end_stamp, clip) -> List[Dict[str, Any]]:
        rows = []
        for instruction in instructions:
            self.model.reset()
            output = self.model.score_episode(instruction, clip)
            progress = [float(p) for p in output.progress]
            success = (float(output.success[-1]) if output.success is not None and len(output.success)
                       else math.nan)
            preference = math.nan
            if self.reference is not None:
                self.model.reset()
                preference = float(self.model.prefer(instruction, clip, self.reference))
            rows.append({"source": ref.source, "kind": ref.kind, "episode": ref.episode,
                         "instruction": instruction, "own_instruction": own,
                         "start_frame": start, "end_frame": end,
                         "start_time": round(float(start_stamp), 9), "end_time": round(float(end_stamp), 9),
                         "final_progress": progress[-1], "progress_gain": progress[-1] - progress[0],
                         "success": success, "preference": preference})
        return rows


def check_capabilities(model, job: RankJob) -> None:
    """Refuse, in one line, a ranking the loaded model cannot give."""
    capabilities = model.capabilities
    if job.preference and not capabilities.preference:
        raise ValueError(f"--by preference: the {getattr(model, 'name', 'model')} backend has no preference "
                         f"mode (its capabilities say preference=False); rank by final_progress, "
                         f"progress_gain or success")
    if job.need_success and not capabilities.success:
        raise ValueError(f"--by success: the {getattr(model, 'name', 'model')} backend has no success head; "
                         f"rank by final_progress or progress_gain")


@dataclasses.dataclass
class ScoredSet:
    rows: List[Dict[str, Any]]  # unranked, in episode order
    errors: List[str]
    episodes: int


def episode_error(ref: EpisodeRef, exc: BaseException) -> str:
    text = str(exc)
    return text if ref.source in text else f"{ref.source}: episode {ref.episode}: {text}"
