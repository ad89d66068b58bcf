"""Backends beyond the built-in three, registered by name.

A plugin module (named in the node's ``model.plugin_modules`` parameter, or imported by a tool)
calls :func:`register_backend`; the node then selects it with ``model.backend`` like a built-in
one. This is how a team plugs in its own reward model, and how tests drive the node with a
backend whose outputs they control, through the same interface as the real ones.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Sequence

from robo_reward_ros.models.reward_model import RewardModel

_REGISTRY: Dict[str, Callable[..., RewardModel]] = {}


def register_backend(name: str, factory: Callable[..., RewardModel]) -> None:
    """``factory(model, precision=..., device=..., **options)`` must return a RewardModel."""
    from robo_reward_ros.models.loading.loader import BACKENDS
    if name in BACKENDS:
        raise ValueError(f"'{name}' is a built-in backend name")
    _REGISTRY[name] = factory


def registered_backends() -> Sequence[str]:
    return tuple(sorted(_REGISTRY))


def import_plugins(modules: Sequence[str]) -> None:
    """Import each module so that it registers its backends; errors name the module."""
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise ImportError(f"backend plugin module '{module}' failed to import: {exc}") from exc


def create_reward_model(model: str, backend: str = "auto", precision: str = "bf16",
                        device: str = "auto", **options: Any) -> RewardModel:
    """Create a registered backend by name, else one of the built-in backends."""
    if backend in _REGISTRY:
        return _REGISTRY[backend](model, precision=precision, device=device, **options)
    from robo_reward_ros.models.loading.loader import load_reward_model
    return load_reward_model(model, backend=backend, precision=precision, device=device, **options)
