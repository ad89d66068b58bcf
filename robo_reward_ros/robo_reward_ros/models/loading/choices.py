# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The backend, precision and device names a user may ask for, without importing torch.

Parameters and command lines are thus validated before anything heavy loads.
"""
import os
import re

# The built-in backends; plugins register more (backend_registry.py). "remote" is a robo-reward serve URL.
BACKENDS = ("auto", "robometer", "roboreward", "topreward", "remote")

# nf4/int8 quantize with bitsandbytes; int8wo/int4wo (weight-only, bf16 activations) with torchao,
# which installs from PyPI wherever torch does (the Jetson path: models/loading/torchao_quantization.py).
BITSANDBYTES_PRECISIONS = ("nf4", "int8")
TORCHAO_PRECISIONS = ("int8wo", "int4wo")
QUANTIZED = BITSANDBYTES_PRECISIONS + TORCHAO_PRECISIONS
PRECISIONS = ("fp32", "bf16", "fp16") + QUANTIZED
DEVICES = ("auto", "cuda", "cpu")


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")


def check_device(device: str) -> None:
    if device not in DEVICES and not str(device).startswith("cuda:"):
        raise ValueError(f"device must be one of {DEVICES} or 'cuda:N', got {device!r}")


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


def check_model_reference(model: str) -> str:
    """Check that a model is an existing local directory or a hub id ``owner/name``.

    Anything else (a URL, a path that does not exist, ``..`` tricks) is refused before any loader
    sees it. Returns which of the two it is ("directory" or "hub id").
    """
    if os.path.isdir(model):
        return "directory"
    if _HUB_ID.match(model) and ".." not in model:
        return "hub id"
    raise ValueError(f"model '{model}' is neither an existing directory nor a model id of the "
                     "form owner/name")
