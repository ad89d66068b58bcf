# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""A model's recommended monitor settings, applied to the parameters the user has not set.

Thresholds that suit Robometer's success head do not suit RoboReward's 1-5 scale or TOPReward's
log-probabilities, so they travel with the model: ``monitor_defaults.yaml`` in a local checkpoint
directory (``robo-reward calibrate`` writes it), or the ``monitor`` values of a preset. The file is
a flat YAML mapping of node parameter names (only MODEL_PARAMETERS) to values, each checked with
the range of the parameter table, and together as the monitor checks them (``success.k`` <=
``success.n``).

Precedence, per parameter: a value the user set (start-up override that differs from the built-in
default, or set at run time) > the model file (or the preset) > the built-in default. A start-up
value equal to the built-in default counts as not set: the launch file passes the installed
config/reward.yaml, which lists every default. ``model.monitor_defaults:=false`` turns the model's
values off. ROS-free: the node and the offline replay resolve the same way.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
from typing import Any, Collection, Dict, List, Mapping, Optional

from robo_reward_ros.models.loading.presets import PRESETS
from robo_reward_ros.settings.node_settings import monitor_config
from robo_reward_ros.settings.parameter_table import NO_PRESET, SPECS

FILE_NAME = "monitor_defaults.yaml"
SWITCH = "model.monitor_defaults"
# The monitor parameters whose right value depends on the model's output scale. Camera rule,
# terminal kinds, time limits and the reward shape are the deployment's choice, not the model's.
MODEL_PARAMETERS = (
    "success.threshold", "success.progress_threshold", "success.k", "success.n",
    "failure.regression_margin", "failure.regression_hold_sec", "failure.stall_min_delta",
    "failure.stall_window_sec", "failure.low_progress_floor", "failure.low_progress_grace_sec",
    "failure.sustain_estimates",
)
BUILT_IN = "built-in default"
USER = "user override"
_SPEC = {spec.name: spec for spec in SPECS}


class MonitorDefaultsError(ValueError):
    """A model's monitor settings cannot be used; the message names the file and the value."""


def _typed(name: str, value: Any, where: str) -> Any:
    spec = _SPEC[name]
    if isinstance(spec.default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MonitorDefaultsError(f"{where}: {name} must be an integer, got {value!r}")
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MonitorDefaultsError(f"{where}: {name} must be a number, got {value!r}")
    else:
        value = float(value)
    if spec.low is not None and not spec.low <= value <= spec.high:
        raise MonitorDefaultsError(f"{where}: {name} must be in [{spec.low:g}, {spec.high:g}], got {value!r}")
    return value


def check_values(values: Any, where: str) -> Dict[str, Any]:
    """Return the values typed as the node's parameters; MonitorDefaultsError names what is wrong."""
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise MonitorDefaultsError(f"{where}: expected a mapping of parameter names to values, "
                                   f"got {type(values).__name__}")
    checked = {}
    for name, value in values.items():
        if name not in MODEL_PARAMETERS:
            near = difflib.get_close_matches(str(name), MODEL_PARAMETERS, n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]}?)" if near else f" (known: {', '.join(MODEL_PARAMETERS)})"
            raise MonitorDefaultsError(f"{where}: {name!r} is not a model monitor parameter{hint}")
        checked[name] = _typed(name, value, where)
    try:  # together, on the built-in defaults: k <= n, thresholds above 0
        monitor_config({**{s.name: s.default for s in SPECS}, **checked}, ["camera"])
    except ValueError as exc:
        raise MonitorDefaultsError(f"{where}: {exc}") from None
    return {name: checked[name] for name in MODEL_PARAMETERS if name in checked}


def read_file(path: str) -> Dict[str, Any]:
    import yaml
    try:
        with open(path, encoding="utf-8") as handle:
            loaded = yaml.safe_load(handle)
    except OSError as exc:
        raise MonitorDefaultsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise MonitorDefaultsError(f"{path}: not YAML: {' '.join(str(exc).split())}") from None
    return check_values(loaded, path)


def write_file(path: str, values: Mapping[str, Any], comment: Collection[str] = ()) -> str:
    """Write the checked values (comment lines first) whole, then move the file into place; return its path."""
    import yaml
    checked = check_values(dict(values), path)
    if os.path.isdir(path):
        path = os.path.join(path, FILE_NAME)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    text = "".join(f"# {line}\n" for line in comment) + yaml.safe_dump(checked, sort_keys=False)
    with open(path + ".part", "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(path + ".part", path)
    return path


@dataclasses.dataclass(frozen=True)
class ModelDefaults:
    source: str  # "model file PATH" or "preset NAME"
    values: Dict[str, Any]


def find_model_defaults(values: Mapping[str, Any]) -> Optional[ModelDefaults]:
    """Return the loaded model's recommended values: its checkpoint's file, else its preset's; None if neither.

    A preset's values belong to the preset's own checkpoint: with ``model.id`` set to another,
    only that checkpoint's file counts. MonitorDefaultsError for a bad file.
    """
    preset_name = str(values.get("model.preset", "")).strip()
    preset = PRESETS.get(preset_name) if preset_name not in ("", NO_PRESET) else None
    given_id = str(values.get("model.id", "")).strip()
    model_id = os.path.expanduser(given_id or (preset.model_id if preset else ""))
    if model_id and os.path.isdir(model_id):
        path = os.path.join(model_id, FILE_NAME)
        if os.path.isfile(path):
            return ModelDefaults(f"model file {path}", read_file(path))
    if preset is not None and not given_id and preset.monitor:
        where = f"preset {preset_name}"
        return ModelDefaults(where, check_values(dict(preset.monitor), where))
    return None


def explicit_names(given: Mapping[str, Any], set_at_run_time: Collection[str] = ()) -> set:
    """Return the model parameters the user set.

    Those set at run time, or given at start-up with a value other than the built-in default.
    """
    return {name for name in MODEL_PARAMETERS if name in set_at_run_time
            or (name in given and given[name] != _SPEC[name].default)}


@dataclasses.dataclass(frozen=True)
class Resolution:
    values: Dict[str, Any]  # every parameter value, the model's applied
    sources: Dict[str, str]  # per model parameter: BUILT_IN, USER, or the model's source
    error: str = ""  # why the model's values were not used ("" when they were, or there are none)

    def describe(self) -> str:
        """Say each model parameter's value, grouped by where it came from (the configure log line)."""
        groups: Dict[str, List[str]] = {USER: []}  # the user's first, the built-in ones last
        for name in MODEL_PARAMETERS:
            if self.sources[name] != BUILT_IN:
                groups.setdefault(self.sources[name], []).append(f"{name}={self.values[name]!r}")
        groups[BUILT_IN] = [f"{name}={self.values[name]!r}" for name in MODEL_PARAMETERS
                            if self.sources[name] == BUILT_IN]
        return "; ".join(f"{source}: {', '.join(items)}" for source, items in groups.items() if items)


def resolve(values: Mapping[str, Any], explicit: Collection[str]) -> Resolution:
    """Apply the model's values to the model parameters not in ``explicit``; the others keep theirs.

    A model parameter not explicit and not in the model's values gets the built-in default (a
    previous checkpoint's value must not linger). A bad file, or model values that do not go with
    the explicit ones, leave the built-in defaults and say why in ``error``; never an exception.
    """
    base = dict(values)
    for name in MODEL_PARAMETERS:
        if name not in explicit:
            base[name] = _SPEC[name].default
    sources = {name: USER if name in explicit else BUILT_IN for name in MODEL_PARAMETERS}
    if not values.get(SWITCH, True):
        return Resolution(base, sources)
    try:
        found = find_model_defaults(values)
    except MonitorDefaultsError as exc:
        return Resolution(base, sources, f"{exc}; using the built-in defaults")
    if found is None:
        return Resolution(base, sources)
    merged = dict(base)
    for name, value in found.values.items():
        if name not in explicit:
            merged[name] = value
            sources[name] = found.source
    try:
        monitor_config(merged, ["camera"])
    except ValueError as exc:
        return Resolution(base, {name: USER if name in explicit else BUILT_IN for name in MODEL_PARAMETERS},
                          f"{found.source} does not go with the values set explicitly ({exc}); "
                          "using the built-in defaults")
    return Resolution(merged, sources)
