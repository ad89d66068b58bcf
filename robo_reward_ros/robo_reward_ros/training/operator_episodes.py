# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Training episodes from the operator's corrections: robot recordings cut and labelled by the node's episode logs.

``ros2 bag record`` of the camera while the reward node ran holds the session's episodes back to
back; the node's episode logs say where each began and ended (in the same frame stamps), what its
stages' instructions were, where each stage began (``StageAdvanced``) and what the operator said
(recordings/episode_log_labels.py). Each logged episode takes the frames inside its span, named
by its episode id; frames outside every episode are dropped, and so are the frames of an episode
with nothing usable in its log (decoded only for episodes that are taken).

Per stage: a success at ``t`` is labelled as a labels file's ``success_sec`` would be
(``labelled_stage``: progress rising linearly to 1 at ``t``, success from ``t``); a stage without
one carries no progress labels, and its frames up to a veto are a hard negative
(``Stage.not_yet_frames``: success 0). Frames under an operator's takeover are left out (a
person's hands are not the robot's progress) unless ``keep_intervention_frames``.
"""
from __future__ import annotations

import bisect
import dataclasses
from typing import Dict, List, Sequence, Tuple

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.recordings.episode_labels import EpisodeLabel
from robo_reward_ros.recordings.episode_log_labels import (EPS, LoggedEpisode, LogLabelling,
                                                           read_logged_episodes)
from robo_reward_ros.training.episodes import (TrainingEpisode, UnusableEpisodeError, labelled_stage,
                                               load_episodes)


@dataclasses.dataclass
class TakenEpisodes:
    """What the logs gave: the training episodes, the logged episodes, and the counts printed."""

    episodes: List[TrainingEpisode]
    logged: List[LoggedEpisode]
    skipped: Dict[str, str]  # episode id -> why
    intervention_frames: Dict[str, int]  # episode id -> frames left out
    outside_frames: int = 0
    problems: List[str] = dataclasses.field(default_factory=list)  # unreadable recordings


def load_logged_episodes(paths: Sequence[str], labelling: LogLabelling, frame_stride: int = 1,
                         skip_unusable: bool = False, log=print, reading=None) -> List[TrainingEpisode]:
    """``load_episodes`` with the robots' recordings among ``paths`` cut and labelled by the episode logs."""
    def cut(bags, options, stride, say):
        taken = episodes_from_episode_logs(bags, options, labelling, stride, log=say)
        return taken.episodes, taken.problems
    return load_episodes(paths, frame_stride, skip_unusable, log, reading, cut_by_logs=cut)


def episodes_from_episode_logs(bags: Sequence[str], reading, labelling: LogLabelling, frame_stride: int = 1,
                               max_pixels: int = 50176, log=print) -> TakenEpisodes:
    """Cut ``bags`` into the logged episodes and label them from the logs; print what was taken."""
    try:
        logged = read_logged_episodes(labelling.directories, labelling.trust_model_successes)
    except (OSError, ValueError) as exc:
        raise UnusableEpisodeError(f"episode logs: {exc}") from None
    taken = TakenEpisodes([], logged, {e.episode_id: e.skipped for e in logged if e.skipped}, {})
    frames, sources = _frames_by_episode(bags, reading, logged, max_pixels, taken)
    for episode in logged:
        if episode.skipped:
            continue
        if len(frames.get(episode.episode_id, [])) < 2:
            count = len(frames.get(episode.episode_id, []))
            taken.skipped[episode.episode_id] = f"{count} frame(s) of it in the recordings; at least 2 are needed"
            continue
        training, why = _training_episode(episode, sorted(frames[episode.episode_id], key=lambda f: f.stamp),
                                          sources[episode.episode_id], labelling, frame_stride, taken)
        if training is None:
            taken.skipped[episode.episode_id] = why
        else:
            taken.episodes.append(training)
    for line in describe_taken(taken):
        log(f"finetune: {line}")
    return taken


def _frames_by_episode(bags: Sequence[str], reading, logged: Sequence[LoggedEpisode], max_pixels: int,
                       taken: TakenEpisodes) -> Tuple[Dict[str, List[Frame]], Dict[str, str]]:
    """Decode the first camera's frames that fall in an episode that is taken (absolute stamps)."""
    from robo_reward_ros.recordings.robot_recording import (RecordingError, decode_image, read_recording)
    from robo_reward_ros.recordings.typestore import kilted_typestore
    # The logs say what the episodes and their instructions are: the whole bag is one stream.
    options = dataclasses.replace(reading, instruction="(from the episode logs)", instruction_topic="",
                                  task_file="", split_topic="", split_gap_sec=0.0, max_frames=None)
    spans = sorted(logged, key=lambda e: e.start)
    starts = [e.start for e in spans]
    frames: Dict[str, List[Frame]] = {}
    sources: Dict[str, str] = {}
    store = kilted_typestore()
    for bag in bags:
        try:
            for recorded in read_recording(bag, options, store):
                topic = recorded.camera_topics[0]
                for message in recorded.messages:
                    if message.camera_topic != topic:
                        continue
                    msg = message.decode(store)
                    stamp = recorded.stamp_ns(message, msg) / 1e9
                    # The latest episode started by then: a frame at a start belongs to the new one.
                    index = bisect.bisect_right(starts, stamp + EPS) - 1
                    if index < 0 or stamp > spans[index].end + EPS:
                        taken.outside_frames += 1
                        continue
                    episode = spans[index]
                    if episode.skipped:
                        continue
                    frames.setdefault(episode.episode_id, []).append(
                        Frame(stamp=stamp, rgb=decode_image(recorded, topic, msg, max_pixels)))
                    sources.setdefault(episode.episode_id, bag)
        except RecordingError as exc:
            taken.problems.append(str(exc))
    return frames, sources


def _training_episode(episode: LoggedEpisode, frames: List[Frame], bag: str, labelling: LogLabelling,
                      frame_stride: int, taken: TakenEpisodes):
    """Return (the episode's stages as a TrainingEpisode, "") or (None, why it cannot be used)."""
    if not labelling.keep_intervention_frames and episode.interventions:
        kept = [f for f in frames if not any(a - EPS <= f.stamp <= b + EPS for a, b in episode.interventions)]
        taken.intervention_frames[episode.episode_id] = len(frames) - len(kept)
        frames = kept
    stages = []
    for index, logged in enumerate(episode.stages):
        # Stage times count from the stage's start (its progress rises from 0 there).
        own = [Frame(stamp=f.stamp - logged.start, rgb=f.rgb) for f in frames
               if episode.stage_at(f.stamp) == index]
        if len(own) < 2:
            if index == 0:
                return None, f"stage 1 has {len(own)} frame(s) in the recordings; at least 2 are needed"
            break  # a later stage with (almost) no frames: the episode's earlier stages still teach
        keep = list(range(0, len(own), max(1, frame_stride)))
        if keep[-1] != len(own) - 1:
            keep.append(len(own) - 1)
        label = (EpisodeLabel("success", success_sec=logged.success_at - logged.start)
                 if logged.success_at is not None else EpisodeLabel("failure"))
        stage = labelled_stage(logged.instruction, own, keep, label)
        if stage.progress is None and logged.not_yet_until is not None:
            limit = logged.not_yet_until - logged.start + EPS
            stage.not_yet_frames = sum(1 for f in stage.frames if f.stamp <= limit)
        stages.append(stage)
    return TrainingEpisode(episode.episode_id, episode.stages[0].instruction, episode.outcome, stages, bag), ""


def describe_taken(taken: TakenEpisodes) -> List[str]:
    """Return the lines that say what the logs gave: the totals, then one line per episode."""
    by_outcome: Dict[str, int] = {}
    for training in taken.episodes:
        by_outcome[training.outcome] = by_outcome.get(training.outcome, 0) + 1
    spans = sum(1 for t in taken.episodes for s in t.stages if s.not_yet_frames)
    excluded = sum(taken.intervention_frames.values())
    lines = [f"episode logs: {len(taken.logged)} episode(s) found, {len(taken.episodes)} taken: "
             f"{by_outcome.get('success', 0)} success, {by_outcome.get('failure', 0)} failure, "
             f"{by_outcome.get('not_yet', 0)} hard negative (vetoed, not yet successful)"
             + (f", {by_outcome['']} with stage labels only" if by_outcome.get("") else "")
             + f"; {len(taken.skipped)} skipped; {spans} hard-negative span(s); {excluded} intervention "
             f"frame(s) excluded; {taken.outside_frames} frame(s) outside every episode dropped"]
    trainings = {t.name: t for t in taken.episodes}
    for episode in taken.logged:
        name = episode.episode_id
        if name in taken.skipped:
            lines.append(f"  {name}: skipped: {taken.skipped[name]}")
            continue
        training = trainings[name]
        what = [episode.outcome or "stage labels only"]
        for number, (logged, stage) in enumerate(zip(episode.stages, training.stages), start=1):
            where = f"stage {number}: " if len(episode.stages) > 1 else ""
            if logged.success_at is not None:
                what.append(f"{where}success at {logged.success_at - episode.start:.2f} s "
                            f"({logged.success_by})")
            if stage.not_yet_frames:
                what.append(f"{where}not yet successful up to {logged.not_yet_until - episode.start:.2f} s "
                            f"(veto; {stage.not_yet_frames} frame(s))")
        if name in taken.intervention_frames:
            what.append(f"{taken.intervention_frames[name]} takeover frame(s) excluded")
        frames = sum(len(s.frames) for s in training.stages)
        lines.append(f"  {name}: " + "; ".join(what) + f"; {frames} frame(s)")
    return lines
