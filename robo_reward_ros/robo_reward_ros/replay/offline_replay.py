# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Episodes through the node's own reward loop, offline, stepped in frame-stamp time.

The same parameters, the same ``RewardPipeline`` (window, model, task monitor) as the node.

The node steps at ``inference.rate_hz`` of wall time on the newest window; here a step happens
when a frame's stamp reaches the next multiple of ``1 / inference.rate_hz`` after the episode's
first frame, and at the last frame, so a bag gives the same decisions at any replay speed.
Monitor time rules (stall windows, timeouts) run on frame stamps in both.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from robo_reward_ros.core.events import (EpisodeEnded, FailureDetected, MonitorEvent,
                                         StageSucceeded, VerifierChecked)
from robo_reward_ros.core.frame_intake import FrameIntake, ManualClock
from robo_reward_ros.core.monitor_update import MonitorUpdate
from robo_reward_ros.core.reward_pipeline import CameraResult, RewardPipeline
from robo_reward_ros.core.task_monitor import TaskMonitor
from robo_reward_ros.core.task_spec import build_task
from robo_reward_ros.recordings.episode import Episode
from robo_reward_ros.recordings.trace import EpisodeTrace, EstimateRecord, EventRecord


def node_parameter_values(model: str, backend: str = "robometer", precision: str = "fp32",
                          device: str = "cpu", overrides: Optional[Dict[str, Any]] = None
                          ) -> Dict[str, Any]:
    """Every reward-node parameter: the node's defaults, the model, no episode log, then ``overrides``.

    ``overrides`` uses node parameter names. The live replay passes the same values to the node.
    """
    from robo_reward_ros.settings.parameter_table import SPECS
    values = {spec.name: spec.default for spec in SPECS}
    values.update({"model.preset": "", "model.id": model, "model.backend": backend,
                   "model.precision": precision, "model.device": device,
                   "episode_log.directory": ""})
    for name, value in (overrides or {}).items():
        if name not in values:
            raise ValueError(f"unknown reward_node parameter '{name}'")
        values[name] = _typed(name, values[name], value)
    return values


TINY_RANDOM_MODEL = "tiny-random"  # --model name of the random-weight checkpoint (plumbing checks)


def offline_parameter_values(model: str = "", backend: str = "", precision: str = "",
                             device: str = "cpu", params: Sequence[str] = (), log=print
                             ) -> Tuple[Dict[str, Any], bool]:
    """Node parameters for an offline tool, and whether the model is the tiny random one.

    ``-p NAME=VALUE`` means what it means to the node (``-p model.preset=demo`` runs the demo
    model, ``-p model.id=DIR`` a checkpoint). ``--model`` stands for ``model.preset:=none
    model.id:=MODEL`` with the backend recognised and fp32 on the CPU; without either, the demo
    preset (installed with the package, loads offline). The random-weight checkpoint is used
    only when asked for by name (``--model tiny-random``).
    """
    overrides = dict(parse_param(p) for p in params)
    tiny = model == TINY_RANDOM_MODEL
    if tiny:
        from robo_reward_ros.simulation.demo_assets import demo_checkpoint
        model = demo_checkpoint(log)
    if model:
        values = node_parameter_values(model, backend or ("robometer" if tiny else "auto"), precision or "fp32",
                                       device, overrides)
    else:
        values = node_parameter_values("", backend, precision, device, {"model.preset": "demo", **overrides})
    return with_model_monitor_settings(values, overrides, log), tiny


def with_model_monitor_settings(values: Dict[str, Any], overrides: Dict[str, Any], log=print) -> Dict[str, Any]:
    """Apply the model's recommended monitor settings as the node does; a ``-p`` value is the user's and stays."""
    from robo_reward_ros.settings.monitor_defaults import BUILT_IN, USER, resolve
    resolution = resolve(values, set(overrides))
    if resolution.error:
        log(f"model monitor settings: {resolution.error}")
    if set(resolution.sources.values()) - {BUILT_IN, USER}:
        log(f"monitor settings: {resolution.describe()}")
    return resolution.values


def model_info(values: Dict[str, Any], tiny: bool) -> Dict[str, Any]:
    """Describe the model as the run's logs record it (what ``robo-reward eval`` loads again)."""
    from robo_reward_ros.settings.node_settings import model_settings
    spec = model_settings(values)
    preset = str(values["model.preset"]).strip()
    named = f"preset {preset}: " if preset not in ("", "none") else ""
    text = f"{named}{spec.backend} {spec.model_id} {spec.precision}"
    return {"model": spec.model_id, "backend": spec.backend, "precision": spec.precision,
            "tiny_random_model": tiny,
            "model_description": text + (" - TINY RANDOM MODEL: random weights, the figures "
                                         "mean nothing" if tiny else "")}


def _typed(name: str, default: Any, value: Any) -> Any:
    """``value`` as the node would take it for a parameter with ``default``, or ValueError."""
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value  # ROS types parameters by their default: 4 means 4.0
    elif isinstance(default, str):  # YAML reads model.id=123 as a number: text here, as ROS has it
        ok = value is not None and not isinstance(value, (list, dict))
        value = str(value) if ok else value
    else:
        ok = isinstance(value, list)
    if not ok:
        kind = {bool: "true or false", int: "an integer", float: "a number", str: "text"}.get(
            type(default), "a list")
        raise ValueError(f"parameter {name} must be {kind}, got {value!r}")
    return value


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
        from robo_reward_ros.settings.node_settings import read_settings
        self.values = values
        self.settings = read_settings(values)
        if model is None:
            from robo_reward_ros.models.loading.backend_registry import import_plugins
            from robo_reward_ros.models.loading.loader import load_reward_model
            spec = self.settings.model
            import_plugins(spec.plugin_modules)
            model = load_reward_model(spec.model_id, spec.backend, spec.precision,
                                      spec.device, **dict(spec.options))
        self.model = model
        self.verifier = None  # the second opinion (success.verifier.*), loaded as the node does
        if self.settings.verifier is not None:
            from robo_reward_ros.core.verifier import Verifier
            from robo_reward_ros.models.loading.backend_registry import import_plugins
            from robo_reward_ros.models.loading.loader import load_reward_model
            from robo_reward_ros.models.loading.verifier_loading import load_verifier
            import_plugins(self.settings.verifier.plugin_modules)
            self.verifier = Verifier(load_verifier(self.settings.verifier, model, load_reward_model)[0])
        self.camera = self.settings.monitor.cameras[0]

    def close(self) -> None:
        self.model.close()
        if self.verifier is not None:
            self.verifier.close()

    def replay(self, episode: Episode, bag: str = "",
               on_frame: Optional[Callable[[], None]] = None) -> EpisodeTrace:
        """Replay an episode held in memory (the project's own bags, with their truth)."""
        camera = self.camera
        frames = ((frame.stamp, lambda intake, f=frame: intake.receive_rgb(camera, f.stamp, f.rgb))
                  for frame in episode.frames)
        trace = EpisodeTrace(episode, bag=bag)
        self._run(trace, build_task(list(episode.instructions)), self.settings, frames, on_frame)
        return trace

    def replay_recording(self, recorded, on_frame: Optional[Callable[[], None]] = None,
                         sink=None) -> EpisodeTrace:
        """Replay a streamed episode of any recording; its camera messages are decoded by the intake.

        ``sink`` (an episode MCAP writer) receives each camera message, estimate and event.
        """
        from robo_reward_ros.settings.node_settings import camera_name, read_settings
        from robo_reward_ros.recordings.typestore import kilted_typestore
        settings = read_settings({**self.values, "cameras.topics": list(recorded.camera_topics)})
        names = {topic: camera_name(topic) for topic in recorded.camera_topics}
        store = kilted_typestore()
        episode = Episode(name=recorded.name, instructions=recorded.instructions, frames=[],
                          source="rosbag2", info=dict(recorded.info))
        trace = EpisodeTrace(episode, bag=recorded.bag, stamps=[])
        if sink is not None:
            sink.attach(trace)
        origin: List[int] = []
        primary = recorded.camera_topics[0]

        def frames():
            for message in recorded.messages:
                msg = message.decode(store)
                stamp_ns = recorded.stamp_ns(message, msg)
                if not origin:
                    origin.append(stamp_ns)
                    trace.origin_ns = stamp_ns
                stamp = (stamp_ns - origin[0]) / 1e9
                receive = _feeder(names[message.camera_topic], stamp, msg,
                                  recorded.compressed[message.camera_topic])
                yield stamp, lambda intake, m=message, ns=stamp_ns, s=stamp, r=receive: consume(intake, m, ns, s, r)

        def consume(intake, message, stamp_ns, stamp, receive):
            """Record a frame the loop takes (not the one it looked ahead at), then hand it over."""
            if sink is not None:
                sink.camera(message, stamp_ns)
            if message.camera_topic == primary:
                trace.stamps.append(stamp)
            return receive(intake)

        intake = self._run(trace, recorded.task, settings, frames(), on_frame,
                           topics={names[t]: t for t in recorded.camera_topics})
        trace.cameras = _camera_stats(intake)
        return trace

    def replay_frames(self, name: str, task, cameras: List[str], frames, source: str,
                      info: Optional[Dict[str, Any]] = None,
                      on_frame: Optional[Callable[[], None]] = None) -> EpisodeTrace:
        """Replay decoded frames streamed in time order: ``frames`` yields (stamp, camera, RGB).

        For datasets whose videos are decoded one frame at a time (LeRobot); ``cameras`` name the
        streams as estimates will.
        """
        from robo_reward_ros.settings.node_settings import read_settings
        settings = read_settings({**self.values, "cameras.topics": list(cameras)})
        episode = Episode(name=name, instructions=tuple(s.instruction for s in task.stages), frames=[],
                          source=source, info=dict(info or {}))
        trace = EpisodeTrace(episode, stamps=[])

        def receive(intake, camera, stamp, rgb):
            if camera == cameras[0]:  # frames the loop takes, not the one it looked ahead at
                trace.stamps.append(stamp)
            return intake.receive_rgb(camera, stamp, rgb)

        def fed():
            for stamp, camera, rgb in frames:
                yield stamp, (lambda intake, c=camera, s=stamp, f=rgb: receive(intake, c, s, f))

        intake = self._run(trace, task, settings, fed(), on_frame, topics={c: c for c in cameras})
        trace.cameras = _camera_stats(intake)
        return trace

    def _run(self, trace: EpisodeTrace, task, settings, frames, on_frame,
             topics: Optional[Dict[str, str]] = None) -> FrameIntake:
        """Run the node's loop in frame-stamp time: intake every frame, step at ``inference.rate_hz``."""
        pipeline = RewardPipeline(self.model, TaskMonitor(settings.monitor),
                                  settings.monitor.cameras, settings.window,
                                  settings.error_policy(), verifier=self.verifier)
        clock = ManualClock()  # follows the recording's stamps
        intake = FrameIntake(pipeline, settings.max_pixels, settings.max_stamp_jump_sec,
                             settings.new_timeline_frames, topics=topics, clock=clock)
        name = trace.episode.name
        _events(trace, pipeline.set_task(task, None, True, episode_id=name))
        period = 1.0 / settings.rate_hz
        next_step: Optional[float] = None
        last_stamp: Optional[float] = None
        frames = iter(frames)
        pending = next(frames, None)
        while pending is not None:
            stamp, feed = pending
            pending = next(frames, None)  # look ahead: the last frame is always scored
            if next_step is None:
                next_step = stamp + period
            last_stamp = stamp
            clock.now = stamp
            _events(trace, intake.tick())  # a gap in the recording is a silent camera
            _events(trace, feed(intake).updates)
            # Step once every camera's frame of this stamp is in (several cameras, same stamp).
            if pending is None or (stamp >= next_step - 1e-9 and pending[0] > stamp + 1e-9):
                while next_step <= stamp + 1e-9:
                    next_step += period
                report = pipeline.step()
                for result in report.results:
                    if result.update.accepted:
                        trace.estimates.append(trace.add_truth(_estimate(name, result)))
                    _events(trace, [result.update])
                _events(trace, report.updates)
            if on_frame is not None:
                on_frame()
            if not pipeline.episode_active:
                break
        if pipeline.monitor.running and last_stamp is not None:
            _events(trace, [pipeline.abort_episode(last_stamp, "the recording ended")])
        pipeline.close()
        return intake


def _camera_stats(intake: FrameIntake) -> Dict[str, Dict[str, Any]]:
    return {name: {"topic": s.topic, "received": s.received, "accepted": s.accepted,
                   "rejected": s.rejected, "last_error": s.last_error,
                   "refusals": [{"count": count, "reason": reason}
                                for count, reason in s.refusal_counts()]}
            for name, s in intake.stats.items()}


def _feeder(camera: str, stamp: float, msg, compressed: bool):
    """How the intake takes this message: as the node's camera callback hands it over."""
    frame_id = msg.header.frame_id
    if compressed:
        return lambda intake: intake.receive_compressed(camera, stamp, msg.format, msg.data, frame_id)
    return lambda intake: intake.receive_raw(camera, stamp, msg.encoding, msg.height, msg.width,
                                             msg.step, msg.data, frame_id)


def _estimate(episode: str, result: CameraResult) -> EstimateRecord:
    estimate, update = result.estimate, result.update
    succeeded = next((e for e in update.events if isinstance(e, StageSucceeded)), None)
    return EstimateRecord(
        episode=episode, stamp=estimate.stamp,
        stage=succeeded.stage_index if succeeded else update.state.stage_index,
        progress=estimate.last_progress, success_prob=estimate.last_success_prob,
        reward=float(update.reward or 0.0), stage_succeeded=succeeded is not None,
        frame_stamps=list(estimate.frame_stamps), frame_progress=list(estimate.progress),
        frame_success=list(estimate.success_prob or ()), latency_s=estimate.latency_s,
        camera=result.camera)


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
    if isinstance(event, VerifierChecked):
        value = "failed" if event.value is None else f"{event.value:.3f}"
        return EventRecord(episode, event.stamp, event.stage_index, "verifier",
                           kind="confirmed" if event.confirmed else "vetoed",
                           text=f"{'success' if event.success else 'failure'} at {event.model_value:.3f}; "
                                f"verifier {event.backend} {value} vs {event.threshold:g} "
                                f"({event.latency_s * 1000:.0f} ms){'; ' + event.error if event.error else ''}")
    return None
