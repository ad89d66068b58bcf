# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Training examples drawn from episode bags: labels per frame, clips, pairs and negatives.

An episode is split into stages (the node scores each stage's frames with that stage's
instruction). Per frame, the progress label and the stage's success come from the bag's
``/ground_truth``; an episode without it but with outcome ``success`` gets progress ``t / (T - 1)``
and success at its last frame (the papers' rule for success-only data). Episodes without truth
whose outcome is a failure or partial carry no progress labels: they are used only as the worse
clip of preference pairs. A robot's recording gets its outcome (and maybe its success time) from a
labels file, under the same rule. Anything else is unusable and named with the reason.

Examples (what one training sequence is):
- ``progress``: a stage's frames from its start to a random frame ``t``, ``max_frames`` of them
  picked with the node's frame selection (linspace, last frame repeated when short), the progress
  and success labels of the picked frames: temporal clips of successes are partial progress;
- ``counterfactual``: the same clip under another task's instruction: progress 0, no success; where
  the episodes hold the opposite task of the same scene (open/close the drawer, press/pull the
  handle, lock/unlock the door: ``opposite_instruction``), ``contrast_share`` of these clips use it,
  so that success depends on the words, not only on the image;
- ``preference``: two clips of the same instruction, A and B in random order, label 1 when A is
  the better one: a success against a failed or partial episode of the same task, or a success
  against an earlier clip of itself;
- ``not_yet``: a clip ending before an operator's veto (a hard negative): success 0 on every
  frame, no progress label (how far it got is not known, only that it was not done).

Robot recordings cut and labelled by the reward node's episode logs instead of a labels file:
training/operator_episodes.py.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from robo_reward_ros.core.frame import Frame
from robo_reward_ros.recordings.episode_labels import EpisodeLabel
from robo_reward_ros.models.backends.frame_selection import select_frames


class UnusableEpisodeError(ValueError):
    """One or more episodes cannot be trained on; the message names each bag and why."""


@dataclasses.dataclass
class Stage:
    instruction: str
    frames: List[Frame]
    progress: Optional[np.ndarray]  # per frame in [0, 1]; None: unknown (failures without truth)
    success: Optional[np.ndarray]  # per frame, bool
    not_yet_frames: int = 0  # the first N frames were vetoed as not yet successful (success 0)


@dataclasses.dataclass
class TrainingEpisode:
    name: str
    task: str
    outcome: str
    stages: List[Stage]
    bag: str = ""

    @property
    def labelled(self) -> bool:
        return all(s.progress is not None for s in self.stages)


@dataclasses.dataclass
class Example:
    kind: str  # progress | counterfactual | preference | not_yet
    instruction: str
    frames: List[Frame]  # clip A for preference
    progress: Optional[np.ndarray] = None  # targets per frame of ``frames`` (None: no progress loss)
    success: Optional[np.ndarray] = None  # None: no success loss either
    frames_b: Optional[List[Frame]] = None
    preference: Optional[float] = None  # 1.0: A is better


def episode_from_bag(path: str, frame_stride: int = 1) -> TrainingEpisode:
    """Read one bag into stages with labels; raises UnusableEpisodeError with the reason."""
    from robo_reward_ros.recordings.episode_bag import read_episode_bag
    try:
        episode = read_episode_bag(path)
    except Exception as exc:  # unreadable, no camera topic, no instruction, truth gaps
        raise UnusableEpisodeError(f"{path}: unreadable episode bag ({exc})") from None
    frames, truth = episode.frames, episode.truth
    if len(frames) < 2:
        raise UnusableEpisodeError(f"{path}: {len(frames)} frame(s); at least 2 are needed")
    task = episode.task or episode.instructions[0]
    keep = list(range(0, len(frames), max(1, frame_stride)))
    if keep[-1] != len(frames) - 1:
        keep.append(len(frames) - 1)
    stages: List[Stage] = []
    if truth is not None:
        for index, instruction in enumerate(episode.instructions):
            rows = [i for i in keep if truth[i].stage == index]
            if len(rows) < 2:
                if index == 0 or any(t.stage == index for t in truth):
                    raise UnusableEpisodeError(f"{path}: stage {index + 1} has {len(rows)} labelled frame(s)")
                continue  # a later stage the episode never reached
            stages.append(Stage(instruction, [frames[i] for i in rows],
                                np.array([truth[i].progress for i in rows], dtype=np.float32),
                                np.array([truth[i].success for i in rows], dtype=bool)))
        bad = {t.stage for t in truth} - set(range(len(episode.instructions)))
        if bad:
            raise UnusableEpisodeError(f"{path}: ground truth names stage(s) {sorted(bad)} but the "
                                       f"episode has {len(episode.instructions)} instruction(s)")
    elif episode.outcome:
        if len(episode.instructions) != 1:
            raise UnusableEpisodeError(f"{path}: a multi-stage episode needs per-frame ground truth "
                                       "(/ground_truth) to know where its stages start")
        stages.append(labelled_stage(episode.instructions[0], frames, keep, EpisodeLabel(episode.outcome)))
    else:
        raise UnusableEpisodeError(f"{path}: no per-frame ground truth (/ground_truth) and no outcome in "
                                   "/episode: nothing to learn from (label it, e.g. robo-reward video-bags "
                                   "--outcome success)")
    return TrainingEpisode(episode.name, task, episode.outcome or "", stages, path)


def labelled_stage(instruction: str, frames: List[Frame], keep: Sequence[int], label: EpisodeLabel) -> Stage:
    """Label a stage known only by its episode's outcome: a success's progress rises linearly to its success.

    The papers' rule for success-only data; failed and partial episodes get no progress labels
    (they are the worse clip of preference pairs). ``frames`` stamps count from the episode's start.
    """
    kept = [frames[i] for i in keep]
    if label.outcome != "success":
        return Stage(instruction, kept, None, None)
    last = frames[-1].stamp
    done = label.done_at(last)
    progress = np.array([label.progress_at(f.stamp, last) for f in kept], dtype=np.float32)
    success = np.array([f.stamp >= done - 1e-9 for f in kept], dtype=bool)
    return Stage(instruction, kept, progress, success)


def episodes_from_recording(bag: str, reading, labels: Dict[str, EpisodeLabel], labels_path: str,
                            frame_stride: int = 1, max_pixels: int = 50176) -> List[TrainingEpisode]:
    """Read a robot recording's episodes as replay does, labelled from a labels file; raises UnusableEpisodeError."""
    from robo_reward_ros.recordings.robot_recording import RecordingError, decoded_episodes
    episodes = []
    try:
        for recorded, frames in decoded_episodes(bag, reading, max_pixels):
            label = labels.get(recorded.name)
            if label is None:
                raise UnusableEpisodeError(f"{bag}: episode {recorded.name} has no label in {labels_path}")
            if len(recorded.instructions) != 1:
                raise UnusableEpisodeError(f"{bag}: episode {recorded.name} has {len(recorded.instructions)} "
                                           "stages; outcome labels do not say where each starts")
            if len(frames) < 2:
                raise UnusableEpisodeError(f"{bag}: episode {recorded.name} has {len(frames)} frame(s); "
                                           "at least 2 are needed")
            keep = list(range(0, len(frames), max(1, frame_stride)))
            if keep[-1] != len(frames) - 1:
                keep.append(len(frames) - 1)
            instruction = recorded.instructions[0]
            episodes.append(TrainingEpisode(recorded.name, label.task or instruction, label.outcome,
                                            [labelled_stage(instruction, frames, keep, label)], bag))
    except RecordingError as exc:
        raise UnusableEpisodeError(str(exc)) from None
    return episodes


def load_episodes(paths: Sequence[str], frame_stride: int = 1, skip_unusable: bool = False,
                  log=print, reading=None, labels_path: str = "", cut_by_logs=None) -> List[TrainingEpisode]:
    """Episodes of the bags named or found one level below the folders named.

    With ``reading`` (RecordingOptions), ``labels_path`` or ``cut_by_logs``, bags not in the
    project's own layout are read as robots' recordings, labelled from the labels file
    (recordings/episode_labels.py) or, all together, by ``cut_by_logs(bags, reading, frame_stride,
    log) -> (episodes, problems)``: the reward node's episode logs (operator_episodes.py, which
    passes it, as this module cannot import that one).
    """
    from robo_reward_ros.recordings.episode_bag import find_bags
    from robo_reward_ros.recordings.episode_labels import load_labels
    from robo_reward_ros.recordings.robot_recording import RecordingOptions, is_own_layout
    if labels_path and cut_by_logs is not None:
        raise ValueError("give --labels or --episode-logs, not both: each labels the robot recordings")
    labels = load_labels(labels_path) if labels_path else {}
    robot = reading is not None or bool(labels_path) or cut_by_logs is not None
    reading = reading or RecordingOptions()
    episodes, problems, logged_bags = [], [], []
    for bag in find_bags(paths):
        try:
            try:
                own = not robot or is_own_layout(bag)
            except Exception as exc:  # rosbags raises several types for a damaged bag
                raise UnusableEpisodeError(f"{bag}: cannot open the recording ({exc})") from None
            if not own and cut_by_logs is not None:
                logged_bags.append(bag)  # cut by the logs together: an episode may span bags
            elif not own:
                if not labels_path:
                    raise UnusableEpisodeError(f"{bag}: a robot recording carries no outcome: give --labels")
                episodes += episodes_from_recording(bag, reading, labels, labels_path, frame_stride)
            else:
                episodes.append(episode_from_bag(bag, frame_stride))
        except UnusableEpisodeError as exc:
            problems.append(str(exc))
    if logged_bags:
        taken, unreadable = cut_by_logs(logged_bags, reading, frame_stride, log)
        episodes += taken
        problems += unreadable
    if problems and not skip_unusable:
        raise UnusableEpisodeError("unusable episode(s) (fix them, leave them out, or pass "
                                   "--skip-unusable):\n  " + "\n  ".join(problems))
    for problem in problems:
        log(f"skipped: {problem}")
    if not any(e.labelled for e in episodes):
        raise UnusableEpisodeError("no episode with progress labels (per-frame ground truth, or outcome "
                                   "success): nothing to train the progress head on")
    return episodes


def split_episodes(episodes: Sequence[TrainingEpisode], fraction: float, seed: int
                   ) -> Tuple[List[TrainingEpisode], List[TrainingEpisode]]:
    """Split off a held-out share of the episodes, drawn per task so every task keeps training data."""
    if fraction <= 0:
        return list(episodes), []
    rng = np.random.default_rng(seed)
    by_task: Dict[str, List[TrainingEpisode]] = {}
    for episode in episodes:
        by_task.setdefault(episode.task, []).append(episode)
    train, held = [], []
    for task in sorted(by_task):
        group = by_task[task]
        order = rng.permutation(len(group))
        count = int(round(len(group) * fraction)) if len(group) > 1 else 0
        held += [group[i] for i in order[:count]]
        train += [group[i] for i in order[count:]]
    return train, held


# Words swapped to turn an instruction into the opposite task on the same scene.
OPPOSITE_WORDS = {"open": "close", "close": "open", "press": "pull", "pull": "press", "lock": "unlock",
                  "unlock": "lock", "up": "down", "down": "up", "on": "off", "off": "on"}


def opposite_instruction(instruction: str) -> str:
    """``"open the drawer"`` -> ``"close the drawer"``; every opposite word swapped, case kept lower."""
    return " ".join(OPPOSITE_WORDS.get(word, word) for word in instruction.lower().split())


class ExampleSampler:
    """Draws examples; every draw is a function of the generator given, so runs repeat."""

    def __init__(self, episodes: Sequence[TrainingEpisode], max_frames: int = 8,
                 counterfactual_fraction: float = 0.15, preference_fraction: float = 0.2,
                 contrast_share: float = 0.5) -> None:
        self.max_frames = max_frames
        self.counterfactual_fraction = counterfactual_fraction
        self.contrast_share = contrast_share
        self.preference_fraction = preference_fraction
        self.labelled = [(e, s) for e in episodes for s in e.stages if s.progress is not None]
        # Stages with a vetoed span and no progress labels: drawn as often as a labelled stage.
        self.not_yet = [(e, s) for e in episodes for s in e.stages
                        if s.progress is None and s.not_yet_frames >= 2]
        self.instructions = sorted({s.instruction for e in episodes for s in e.stages})
        known = {i.lower(): i for i in self.instructions}
        # The opposite task's instruction, where an episode of it exists (so the words are in use).
        self.opposites = {i: known[opposite_instruction(i)] for i in self.instructions
                          if opposite_instruction(i) in known and opposite_instruction(i) != i.lower()}
        # Preference candidates per instruction of a first stage: successes and worse episodes.
        self.better: Dict[str, List[TrainingEpisode]] = {}
        self.worse: Dict[str, List[TrainingEpisode]] = {}
        for episode in episodes:
            key = episode.stages[0].instruction
            if episode.outcome == "success" and episode.labelled:
                self.better.setdefault(key, []).append(episode)
            elif episode.outcome in ("failure", "partial"):
                self.worse.setdefault(key, []).append(episode)
        self.successes = [e for group in self.better.values() for e in group]

    def _clip(self, stage: Stage, end: int) -> Tuple[List[Frame], np.ndarray]:
        indices = select_frames(list(range(end + 1)), self.max_frames, "linspace", pad=True)
        return [stage.frames[i] for i in indices], np.asarray(indices)

    def progress_example(self, rng: np.random.Generator) -> Example:
        pick = int(rng.integers(len(self.labelled) + len(self.not_yet)))
        if pick >= len(self.labelled):
            return self.not_yet_example(rng, self.not_yet[pick - len(self.labelled)][1])
        episode, stage = self.labelled[pick]
        # A quarter of the clips run to the stage's end; the rest stop at a random frame.
        end = len(stage.frames) - 1 if rng.random() < 0.25 else int(rng.integers(1, len(stage.frames)))
        frames, idx = self._clip(stage, end)
        others = [i for i in self.instructions if i != stage.instruction]
        if others and rng.random() < self.counterfactual_fraction:
            opposite = self.opposites.get(stage.instruction)
            wrong = (opposite if opposite and rng.random() < self.contrast_share
                     else others[rng.integers(len(others))])
            return Example("counterfactual", wrong, frames,
                           np.zeros(len(frames), np.float32), np.zeros(len(frames), bool))
        return Example("progress", stage.instruction, frames, stage.progress[idx], stage.success[idx])

    def not_yet_example(self, rng: np.random.Generator, stage: Stage) -> Example:
        """Return a clip of a vetoed span, to its end or a random frame of it: success 0, no progress."""
        last = stage.not_yet_frames - 1
        end = last if rng.random() < 0.25 else int(rng.integers(1, last + 1))
        frames, _ = self._clip(stage, end)
        return Example("not_yet", stage.instruction, frames, None, np.zeros(len(frames), bool))

    def preference_example(self, rng: np.random.Generator) -> Optional[Example]:
        if not self.successes:
            return None
        good = self.successes[rng.integers(len(self.successes))]
        stage = good.stages[0]
        worse = self.worse.get(stage.instruction, [])
        good_frames, good_idx = self._clip(stage, len(stage.frames) - 1)
        if worse and rng.random() < 0.7:
            bad = worse[rng.integers(len(worse))].stages[0]
            bad_frames, _ = self._clip(bad, len(bad.frames) - 1)
        else:  # the same success cut early: less progress
            first = np.flatnonzero(stage.success)
            limit = int(first[0]) if len(first) else len(stage.frames) - 1
            cut = int(rng.integers(1, max(2, int(limit * 0.7))))
            bad_frames, _ = self._clip(stage, cut)
        if rng.random() < 0.5:
            return Example("preference", stage.instruction, good_frames, stage.progress[good_idx],
                           stage.success[good_idx], bad_frames, 1.0)
        return Example("preference", stage.instruction, bad_frames, None, None, good_frames, 0.0)

    def batch(self, rng: np.random.Generator, size: int) -> List[Example]:
        examples = []
        for _ in range(size):
            example = self.preference_example(rng) if rng.random() < self.preference_fraction else None
            examples.append(example or self.progress_example(rng))
        return examples


def describe(episodes: Sequence[TrainingEpisode]) -> str:
    counts: Dict[str, int] = {}
    for episode in episodes:
        counts[episode.outcome or "unlabelled"] = counts.get(episode.outcome or "unlabelled", 0) + 1
    tasks = len({e.task for e in episodes})
    return (f"{len(episodes)} episode(s), {tasks} task(s): "
            + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
