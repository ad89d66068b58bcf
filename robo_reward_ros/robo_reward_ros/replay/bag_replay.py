# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Every episode of a list of bags through the offline replay: the project's own bags and robots' recordings alike.

The project's bags (``/episode`` metadata, maybe ground truth) are read whole, as before: they are
short and their truth is needed for the metrics. Any other recording is streamed
(recordings/robot_recording.py). Episodes scored before with the same key are taken from ``OUT/scored`` unless
forced; a bag that cannot be read (or a camera none of whose frames decode) is reported by bag and
topic and the run goes on with the next.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, List, Optional, Sequence, Tuple

from robo_reward_ros.recordings.robot_recording import RecordingError, RecordingOptions


@dataclasses.dataclass
class BagReplayResult:
    traces: list  # EpisodeTrace (scored now) or StoredTrace (scored before), in bag order
    errors: List[str]
    refusals: List[str] = dataclasses.field(default_factory=list)  # refused frames, per reason
    scored: int = 0
    reused: int = 0


def replay_bags(replayer, bags: Sequence[str], out: str, reading: RecordingOptions,
                run_key: dict, force: bool = False, progress_bar: bool = True,
                episode_writer: Optional[Callable] = None) -> BagReplayResult:
    """Replay every episode of ``bags``; ``episode_writer`` (an EpisodeMcapWriter, or None) writes their MCAPs."""
    from tqdm import tqdm
    from robo_reward_ros.recordings.robot_recording import camera_message_count, is_own_layout
    from robo_reward_ros.replay.scored_episodes import ScoredEpisodes, episode_key
    scored = ScoredEpisodes(out, force)
    result = BagReplayResult([], [])
    streamed_by_default = reading != RecordingOptions(max_frames=reading.max_frames)
    plan: List[Tuple[str, bool]] = []
    total = 0
    for bag in bags:
        try:
            own = not streamed_by_default and is_own_layout(bag)
            total += camera_message_count(bag, reading)
        except Exception:  # unreadable metadata: reported (once) when the bag's turn comes
            own = False
        plan.append((bag, own))
    frames_bar = tqdm(total=total, unit="frame", disable=not progress_bar, desc="frames", position=1)
    episodes_bar = tqdm(unit="episode", disable=not progress_bar, desc="episodes", position=0)
    try:
        for bag, own in plan:
            run = _replay_own_bag if own else _replay_recording
            try:
                run(replayer, bag, reading, run_key, scored, result, frames_bar, episodes_bar,
                    episode_writer, episode_key)
            except (RecordingError, RuntimeError, ValueError, OSError) as exc:
                # Said once, by the caller, with the others (the run goes on with the next bag).
                result.errors.append(bag_error(bag, exc))
    finally:
        frames_bar.close()
        episodes_bar.close()
    return result


def _replay_own_bag(replayer, bag, reading, run_key, scored, result, frames_bar, episodes_bar,
                    episode_writer, episode_key) -> None:
    from robo_reward_ros.recordings.episode_bag import read_episode_bag
    key = episode_key(run_key, bag, 0)
    episode = read_episode_bag(bag, reading.max_frames)
    stored = scored.load(episode.name, key)
    if stored is not None and (episode_writer is None or episode_writer.exists(episode.name)):
        result.traces.append(stored)
        result.reused += 1
    else:
        trace = replayer.replay(episode, bag, on_frame=lambda: frames_bar.update(1))
        scored.store(trace, key)
        result.traces.append(trace)
        result.scored += 1
        if episode_writer is not None:
            episode_writer.write_episode(trace)
    episodes_bar.update(1)


def _replay_recording(replayer, bag, reading, run_key, scored, result, frames_bar, episodes_bar,
                      episode_writer, episode_key) -> None:
    from robo_reward_ros.recordings.robot_recording import read_recording
    for recorded in read_recording(bag, reading):
        episodes_bar.set_postfix_str(recorded.name)
        key = episode_key(run_key, bag, recorded.index)
        stored = scored.load(recorded.name, key)
        if stored is not None and (episode_writer is None or episode_writer.exists(recorded.name)):
            result.traces.append(stored)
            result.reused += 1
            episodes_bar.update(1)
            continue  # read_recording skips its messages without decoding them
        sink = episode_writer.open(recorded) if episode_writer is not None else None
        try:
            trace = replayer.replay_recording(recorded, on_frame=lambda: frames_bar.update(1),
                                              sink=sink)
        except BaseException:
            if sink is not None:
                sink.abandon()  # a half-written episode file is removed
            raise
        broken = [s for s in trace.cameras.values() if s["accepted"] < s["rejected"]
                  or s["accepted"] == 0]
        for stats in trace.cameras.values():
            result.refusals += [f"{bag}: episode {recorded.name}: {line}"
                                for line in refusal_lines(stats)]
        for stats in broken:
            what = (f"none of {stats['received']} frame(s)" if stats["accepted"] == 0 else
                    f"only {stats['accepted']} of {stats['received']} frames")
            why = "" if stats.get("refusals") else f" ({stats['last_error'] or 'no frames'})"
            result.errors.append(
                f"{bag}: topic {stats['topic']}: {what} of episode {recorded.name} could be "
                f"used{why}{_advice(stats, reading)}")
        if sink is not None:
            sink.finish(trace)
        if not broken:  # a broken camera is reported again on the next run
            scored.store(trace, key)
        result.traces.append(trace)
        result.scored += 1
        episodes_bar.update(1)


def bag_error(bag: str, exc: BaseException) -> str:
    """Return the error's message, naming the bag once (most messages already start with it)."""
    return str(exc) if bag in str(exc) else f"{bag}: {exc}"


def refusal_lines(stats: dict) -> List[str]:
    """One line per reason a camera's frames were refused, with how many."""
    return [f"topic {stats['topic']}: {r['count']} of {stats['received']} frame(s) refused: {r['reason']}"
            for r in stats.get("refusals", ())]


def _advice(stats: dict, reading: RecordingOptions) -> str:
    """Say what to do when most of a camera's frames were refused for their stamps."""
    refusals = stats.get("refusals") or []
    if refusals and "stamp" in refusals[0]["reason"] and reading.stamps == "header":
        return ("; most were refused for their stamps: if the camera driver does not stamp its "
                "frames, pass --stamps receive to use the times the recorder received them")
    return ""
