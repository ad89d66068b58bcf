# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Backends beyond the built-in ones, registered by name; :func:`load_reward_model` builds them.

A plugin module (named in the node's ``model.plugin_modules`` parameter, in ``--plugin-modules``
of ``robo-reward score`` and ``robo-reward serve``, or imported by a tool) calls
:func:`register_backend` when imported; every caller then selects it by name like a built-in
one, through the one factory (loader.py). This is how a team plugs in its own reward model, and
how tests drive the node with a backend whose outputs they control. The registry builds nothing
itself, so the factory depends on it and not the other way round.
"""
from __future__ import annotations

import importlib
from typing import Callable, Dict, Optional, Sequence, Tuple

from robo_reward_ros.models.loading.choices import BACKENDS
from robo_reward_ros.models.reward_model import RewardModel

Factory = Callable[..., RewardModel]
_REGISTRY: Dict[str, Factory] = {}


def register_backend(name: str, factory: Factory) -> None:
    """``factory(model, precision=..., device=..., **options)`` must return a RewardModel."""
    if name in BACKENDS:
        raise ValueError(f"'{name}' is a built-in backend name")
    _REGISTRY[name] = factory


def registered_factory(name: str) -> Optional[Factory]:
    """Return the factory a plugin registered under ``name``, or None (a built-in name, or unknown)."""
    return _REGISTRY.get(name)


def backend_names() -> Tuple[str, ...]:
    """Return every name ``backend`` may take now: the built-in ones, then the registered ones."""
    return BACKENDS + tuple(sorted(_REGISTRY))


def import_plugins(modules: Sequence[str]) -> None:
    """Import each module so that it registers its backends; errors name the module."""
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise ImportError(f"backend plugin module '{module}' failed to import: {exc}") from exc
