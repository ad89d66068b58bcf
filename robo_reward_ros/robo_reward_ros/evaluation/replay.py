"""Episodes through the node's own reward loop, offline, stepped in frame-stamp time.

The same parameters, the same ``RewardPipeline`` (window, model, task monitor) as the node.

The node steps at ``inference.rate_hz`` of wall time on the newest window; here a step happens
when a frame's stamp reaches the next multiple of ``1 / inference.rate_hz`` after the episode's
first frame, and at the last frame, so a bag gives the same decisions at any replay speed.
Monitor time rules (stall windows, timeouts) run on frame stamps in both.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional

from robo_reward_ros.core.events import (EpisodeEnded, FailureDetected, MonitorEvent,
                                         StageSucceeded)
from robo_reward_ros.core.frame_intake import FrameIntake, ManualClock
from robo_reward_ros.core.reward_pipeline import CameraResult, RewardPipeline
from robo_reward_ros.core.task_monitor import MonitorUpdate, TaskMonitor
from robo_reward_ros.core.task_spec import build_task
from robo_reward_ros.evaluation.episode import Episode
from robo_reward_ros.evaluation.trace import EpisodeTrace, EstimateRecord, EventRecord


def node_parameter_values(model: str, backend: str = "robometer", precision: str = "fp32",
                          device: str = "cpu", overrides: Optional[Dict[str, Any]] = None
                          ) -> Dict[str, Any]:
    """Every reward-node parameter: the node's defaults, the model, no episode log, then ``overrides``.

    ``overrides`` uses node parameter names. The live replay passes the same values to the node.
    """
    from robo_reward_ros.core.node_settings import SPECS
    values = {spec.name: spec.default for spec in SPECS}
    values.update({"model.preset": "", "model.id": model, "model.backend": backend,
                   "model.precision": precision, "model.device": device,
                   "episode_log.directory": ""})
    for name, value in (overrides or {}).items():
        if name not in values:
            raise ValueError(f"unknown reward_node parameter '{name}'")
        default = values[name]
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # ROS types parameters by their default: 4 means 4.0 here
        values[name] = value
    return values


def parse_param(text: str):
    """``name=value`` (or ``name:=value``) with the value read as YAML, as ROS does."""
    import yaml
    name, sep, value = text.replace(":=", "=", 1).partition("=")
    if not sep or not name.strip():
        raise ValueError(f"expected NAME=VALUE, got '{text}'")
    return name.strip(), yaml.safe_load(value)


class OfflineReplay:
    """One model, one fresh pipeline and monitor per episode (as after a node reset)."""

    def __init__(self, values: Dict[str, Any], model=None) -> None:
        from robo_reward_ros.core.node_settings import read_settings
        self.values = values
        self.settings = read_settings(values)
        if model is None:
            from robo_reward_ros.models.loading.backend_registry import (create_reward_model,
                                                                         import_plugins)
            spec = self.settings.model
            import_plugins(spec.plugin_modules)
            model = create_reward_model(spec.model_id, spec.backend, spec.precision,
                                        spec.device, **dict(spec.options))
        self.model = model
        self.camera = self.settings.monitor.cameras[0]

    def close(self) -> None:
        self.model.close()

    def replay(self, episode: Episode, bag: str = "",
               on_frame: Optional[Callable[[], None]] = None) -> EpisodeTrace:
        settings = self.settings
        pipeline = RewardPipeline(self.model, TaskMonitor(settings.monitor),
                                  settings.monitor.cameras, settings.window,
                                  settings.error_policy())
        clock = ManualClock()  # follows the recording's stamps
        intake = FrameIntake(pipeline, settings.max_pixels, settings.max_stamp_jump_sec,
                             settings.new_timeline_frames, clock=clock)
        trace = EpisodeTrace(episode, bag=bag)
        updates = pipeline.set_task(build_task(list(episode.instructions)), None, True,
                                    episode_id=episode.name)
        _events(trace, updates)
        period = 1.0 / settings.rate_hz
        origin = episode.frames[0].stamp
        next_step = origin + period
        last = len(episode.frames) - 1
        for index, frame in enumerate(episode.frames):
            clock.now = frame.stamp
            _events(trace, intake.tick())  # a gap in the recording is a silent camera
            _events(trace, intake.receive_rgb(self.camera, frame.stamp, frame.rgb).updates)
            if frame.stamp >= next_step - 1e-9 or index == last:
                while next_step <= frame.stamp + 1e-9:
                    next_step += period
                report = pipeline.step()
                for result in report.results:
                    if result.update.accepted:
                        trace.estimates.append(trace.add_truth(_estimate(episode.name, result)))
                    _events(trace, [result.update])
                _events(trace, report.updates)
            if on_frame is not None:
                on_frame()
            if not pipeline.episode_active:
                break
        if pipeline.monitor.running:
            _events(trace, [pipeline.abort_episode(episode.frames[-1].stamp,
                                                   "the recording ended")])
        pipeline.close()
        return trace


def _estimate(episode: str, result: CameraResult) -> EstimateRecord:
    estimate, update = result.estimate, result.update
    succeeded = next((e for e in update.events if isinstance(e, StageSucceeded)), None)
    return EstimateRecord(
        episode=episode, stamp=estimate.stamp,
        stage=succeeded.stage_index if succeeded else update.state.stage_index,
        progress=estimate.last_progress, success_prob=estimate.last_success_prob,
        reward=float(update.reward or 0.0), stage_succeeded=succeeded is not None,
        frame_stamps=list(estimate.frame_stamps), frame_progress=list(estimate.progress),
        frame_success=list(estimate.success_prob or ()), latency_s=estimate.latency_s)


def _events(trace: EpisodeTrace, updates: Iterable[MonitorUpdate]) -> None:
    for update in updates:
        for event in update.events:
            record = event_record(trace.episode.name, event)
            if record is not None:
                trace.events.append(record)


def event_record(episode: str, event: MonitorEvent) -> Optional[EventRecord]:
    if isinstance(event, StageSucceeded):
        return EventRecord(episode, event.stamp, event.stage_index, "stage_succeeded",
                           text=event.reason)
    if isinstance(event, FailureDetected):
        return EventRecord(episode, event.stamp, event.stage_index, "failure",
                           kind=event.kind.name.lower(), terminal=event.terminal,
                           task_failure=event.task_failure, text=event.description)
    if isinstance(event, EpisodeEnded):
        return EventRecord(episode, event.stamp, event.stage_index, "episode_ended",
                           status=event.status.name.lower(), text=event.reason)
    return None


def replay_all(replayer: OfflineReplay, bags: List[str], progress_bar: bool = True,
               max_frames: Optional[int] = None) -> List[EpisodeTrace]:
    """Read and replay each bag with a tqdm bar over all frames."""
    from tqdm import tqdm
    from robo_reward_ros.evaluation.episode_bag import read_episode_bag
    episodes = [(bag, read_episode_bag(bag, max_frames)) for bag in bags]
    traces = []
    with tqdm(total=sum(len(e.frames) for _, e in episodes), unit="frame",
              disable=not progress_bar, desc="replay") as bar:
        for bag, episode in episodes:
            bar.set_postfix_str(episode.name)
            done = [0]

            def advance() -> None:
                done[0] += 1
                bar.update(1)

            traces.append(replayer.replay(episode, bag, on_frame=advance))
            bar.update(len(episode.frames) - done[0])  # frames after the episode ended
    return traces
