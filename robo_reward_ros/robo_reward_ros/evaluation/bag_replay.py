"""Every episode of a list of bags through the offline replay: the project's own bags and robots' recordings alike.

The project's bags (``/episode`` metadata, maybe ground truth) are read whole, as before: they are
short and their truth is needed for the metrics. Any other recording is streamed (evaluation/
recording.py). Episodes scored before with the same key are taken from ``OUT/scored`` unless
forced; a bag that cannot be read (or a camera none of whose frames decode) is reported by bag and
topic and the run goes on with the next.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, List, Optional, Sequence, Tuple

from robo_reward_ros.evaluation.recording import RecordingError, RecordingOptions


@dataclasses.dataclass
class BagReplayResult:
    traces: list  # EpisodeTrace (scored now) or StoredTrace (scored before), in bag order
    errors: List[str]
    scored: int = 0
    reused: int = 0


def replay_bags(replayer, bags: Sequence[str], out: str, reading: RecordingOptions,
                run_key: dict, force: bool = False, progress_bar: bool = True,
                episode_writer: Optional[Callable] = None, log=print) -> BagReplayResult:
    """Replay every episode of ``bags``; ``episode_writer`` (an EpisodeMcapWriter, or None) writes their MCAPs."""
    from tqdm import tqdm
    from robo_reward_ros.evaluation.recording import camera_message_count, is_own_layout
    from robo_reward_ros.evaluation.scored_episodes import ScoredEpisodes, episode_key
    scored = ScoredEpisodes(out, force)
    result = BagReplayResult([], [])
    streamed_by_default = reading != RecordingOptions(max_frames=reading.max_frames)
    plan: List[Tuple[str, bool]] = []
    total = 0
    for bag in bags:
        try:
            own = not streamed_by_default and is_own_layout(bag)
            total += camera_message_count(bag, reading)
        except Exception as exc:  # unreadable metadata: reported when the bag's turn comes
            own = False
            log(f"replay: {bag}: {exc}")
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
                message = str(exc) if bag in str(exc) else f"{bag}: {exc}"
                result.errors.append(message)
                log(f"replay: {message} (continuing with the next bag)")
    finally:
        frames_bar.close()
        episodes_bar.close()
    return result


def _replay_own_bag(replayer, bag, reading, run_key, scored, result, frames_bar, episodes_bar,
                    episode_writer, episode_key) -> None:
    from robo_reward_ros.evaluation.episode_bag import read_episode_bag
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
    from robo_reward_ros.evaluation.recording import read_recording
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
        broken = [s for s in trace.cameras.values() if s["accepted"] == 0]
        for stats in broken:
            result.errors.append(
                f"{bag}: topic {stats['topic']}: none of {stats['received']} frame(s) of episode "
                f"{recorded.name} could be used ({stats['last_error'] or 'no frames'})")
        if sink is not None:
            sink.finish(trace)
        if not broken:  # a broken camera is reported again on the next run
            scored.store(trace, key)
        result.traces.append(trace)
        result.scored += 1
        episodes_bar.update(1)
