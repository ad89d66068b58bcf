# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Will a second model fit beside the first? Asked before loading it, with numbers.

OpenRAL checks that the policy and the reward model fit together before launch. Here the second
model is the verifier: configure refuses it with the sizes involved instead of dying of an
out-of-memory error in the middle of an episode. The need is estimated from the checkpoint's
safetensors headers (parameter counts, no weights read) and the precision it will be loaded in;
what is free is asked of the device once the first model is loaded.
"""
from __future__ import annotations

import glob
import json
import os
import struct
from typing import Optional, Tuple

# Bytes a parameter takes once loaded. 4-bit formats: half a byte plus scales, and the parts kept
# in bf16 (norms, the vision tower's embeddings): 0.6 is what the 4B checkpoints come to.
BYTES_PER_PARAMETER = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.1, "int8wo": 1.1,
                       "nf4": 0.6, "int4wo": 0.6}
HEADROOM = 1.25  # activations of one query, the allocator's fragmentation


def checkpoint_directory(model_id: str) -> Optional[str]:
    """Return the local directory of a checkpoint: the path itself, or its Hugging Face cache snapshot."""
    if os.path.isdir(model_id):
        return model_id
    try:
        from huggingface_hub import snapshot_download
        return snapshot_download(model_id, local_files_only=True)
    except Exception:  # not cached, no hub library, not a repo id: the size is unknown
        return None


def checkpoint_parameters(directory: str) -> Optional[int]:
    """Count the parameters in a directory's safetensors files from their headers (None: no such file)."""
    files = sorted(glob.glob(os.path.join(directory, "*.safetensors")))
    if not files:
        return None
    total = 0
    for path in files:
        with open(path, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            header = json.loads(handle.read(length))
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            count = 1
            for size in entry["shape"]:
                count *= int(size)
            total += count
    return total


def needed_bytes(model_id: str, precision: str) -> Optional[int]:
    """Estimate what a checkpoint takes once loaded in ``precision`` (None when it cannot be told)."""
    directory = checkpoint_directory(model_id) if model_id else None
    parameters = checkpoint_parameters(directory) if directory else None
    if parameters is None or precision not in BYTES_PER_PARAMETER:
        return None
    return int(parameters * BYTES_PER_PARAMETER[precision] * HEADROOM)


def available_bytes(device: str) -> Tuple[Optional[int], str]:
    """Return (bytes free for a new model on ``device``, where that was read)."""
    if device.startswith("cuda"):
        import torch
        index = torch.device(device).index
        free, _ = torch.cuda.mem_get_info(index if index is not None else torch.cuda.current_device())
        return int(free), f"{device} (cudaMemGetInfo)"
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "host memory (MemAvailable)"
    except OSError:
        pass
    return None, "host memory (unknown)"


def resident_bytes(model) -> Optional[int]:
    """Return the bytes of a loaded backend's torch weights and buffers (None for one without them)."""
    module = getattr(model, "model", None)
    if module is None or not hasattr(module, "parameters"):
        return None
    tensors = list(module.parameters()) + list(module.buffers())
    return int(sum(t.numel() * t.element_size() for t in tensors))


def fit_problem(what: str, need: Optional[int], free: Optional[int], where: str, beside: str) -> str:
    """Return why ``what`` does not fit (``""`` when it does, or when either number is unknown)."""
    if need is None or free is None or need <= free:
        return ""
    return (f"{what} needs about {gib(need)} and {where} has {gib(free)} free with {beside} loaded: "
            "choose a smaller verifier or precision (success.verifier.id, success.verifier.precision), "
            "another device (success.verifier.device), or no verifier")


def gib(size: Optional[int]) -> str:
    return "unknown" if size is None else f"{size / 2 ** 30:.2f} GiB"
