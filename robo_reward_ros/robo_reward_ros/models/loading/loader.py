# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The one factory from a backend name and a model id or directory to a ready RewardModel.

The node, the replay, the server, the offline commands and the tests all call
:func:`load_reward_model`, so a plugin backend (backend_registry.py) works wherever a built-in does.
"""
import logging
from typing import Any

from robo_reward_ros.models.loading import bundled_demo
from robo_reward_ros.models.loading import checkpoint_layout as layout
from robo_reward_ros.models.loading.backend_registry import backend_names, registered_factory
from robo_reward_ros.models.loading.choices import BACKENDS, check_device, check_model_reference, check_precision
from robo_reward_ros.models.reward_model import RewardModel

_LOG = logging.getLogger(__name__)


def load_reward_model(model: str, backend: str = "auto", precision: str = "bf16", device: str = "auto",
                      **options: Any) -> RewardModel:
    """Build a registered plugin backend by name, else the built-in one for ``model``.

    ``auto`` recognises Robometer's layout. A plain Qwen3-VL checkpoint can be a RoboReward
    fine-tune or TOPReward's instruct model, which its files cannot tell apart, so ``backend``
    must then be given. A plugin's factory gets the arguments as they are: what ``model`` means
    is the plugin's business.
    """
    factory = registered_factory(backend)
    if factory is not None:
        return factory(model, precision=precision, device=device, **options)
    model = bundled_demo.loadable(model, log=_LOG.info)  # the demo's base model is built here, not fetched
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {backend_names()}, got {backend!r}")
    if backend == "remote":  # model is a robo-reward serve URL; nothing loads here
        from robo_reward_ros.models.backends.remote import RemoteRewardModel
        return RemoteRewardModel(model, precision=precision, device=device, **options)
    check_model_reference(model)
    check_precision(precision)
    check_device(device)
    if backend == "auto":
        kind = layout.detect_backend(layout.load_config_json(model))
        if kind != "robometer":
            raise layout.CheckpointError(f"{model}: a plain Qwen3-VL checkpoint; pass backend='roboreward' "
                                         "(RoboReward fine-tunes) or backend='topreward' (an instruct model)")
        backend = kind
    if backend == "robometer":
        from robo_reward_ros.models.backends.robometer import RobometerBackend
        return RobometerBackend(model, precision=precision, device=device, **options)
    if backend == "roboreward":
        from robo_reward_ros.models.backends.roboreward import RoboRewardBackend
        return RoboRewardBackend(model, precision=precision, device=device, **options)
    from robo_reward_ros.models.backends.topreward import TOPRewardBackend
    return TOPRewardBackend(model, precision=precision, device=device, **options)
