# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Recognise a checkpoint's layout and fail early, with the problem named, on anything else.

Local directories are checked file by file; a model id is left to transformers' own
``from_pretrained`` download path, and only the small JSON/YAML files are fetched up front.
"""
import json
import os
from typing import Any, Dict, List, Optional

from robo_reward_ros.models.loading import hub_access

ROBOMETER_ARCHITECTURES = ("RFM", "RBM")
QWEN3_VL_ARCHITECTURES = ("Qwen3VLForConditionalGeneration",)
# LeRobot's export (lerobot/Robometer-4B) nests the backbone one level deeper: model.model.* -> model.*
LEROBOT_KEY_MAPPING = {r"^model\.model\.": "model."}


class CheckpointError(RuntimeError):
    """The checkpoint is not in a layout this project can load; the message says why."""


def is_local(name_or_path: str) -> bool:
    return os.path.isdir(name_or_path)


def model_file(name_or_path: str, filename: str) -> Optional[str]:
    """Path of a file of a model directory or hub repository, or None when it does not exist.

    Hub files are downloaded into the hub cache; this is the one place a model file is looked up.
    The hub is asked about the model once first (hub_access), so that no network, or no such
    model, fails at once instead of after transformers' retries.
    """
    if is_local(name_or_path):
        path = os.path.join(name_or_path, filename)
        return path if os.path.isfile(path) else None
    if hub_access.probe(name_or_path) == hub_access.MISSING:
        raise CheckpointError(
            f"{name_or_path}: not a local directory, and {hub_access.why_not_here(name_or_path)}")
    from transformers.utils import cached_file
    return cached_file(name_or_path, filename, _raise_exceptions_for_missing_entries=False)


def hub_hint(model_id: str) -> str:
    """Say why a hub id gave nothing here and how to run from a local copy instead."""
    return (f"{hub_access.why_not_here(model_id)}. Download it where the hub is reachable "
            f"(hf download {model_id} --local-dir DIR) and give the directory instead: --model DIR "
            "for the robo-reward tools; for the node, model:=DIR (the model.id parameter)")


def load_config_json(name_or_path: str) -> Dict[str, Any]:
    path = model_file(name_or_path, "config.json")
    if path is None:
        if is_local(name_or_path):
            raise CheckpointError(f"{name_or_path}: no config.json; not a model directory")
        raise CheckpointError(f"{name_or_path}: not a local directory, and no config.json from the hub: "
                              f"{hub_hint(name_or_path)}")
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def is_lerobot_export(config: Dict[str, Any]) -> bool:
    """Tell LeRobot's Robometer export (config.json ``type: robometer`` with ``vlm_config``)."""
    return config.get("type") == "robometer" and isinstance(config.get("vlm_config"), dict)


def load_robometer_yaml(name_or_path: str, config_json: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Return the Robometer settings: config.yaml, or, for LeRobot's export, the same fields from its config.json."""
    import yaml
    if config_json is not None and is_lerobot_export(config_json):
        return {"model": {"base_model_id": config_json.get("base_model_id"),
                          "use_per_frame_progress_token": config_json.get("use_per_frame_progress_token", True)},
                "data": {"max_frames": config_json.get("max_frames") or 8},
                "loss": {"progress_loss_type": config_json.get("progress_loss_type", "discrete"),
                         "progress_discrete_bins": config_json.get("progress_discrete_bins", 10)},
                "training": {}}
    path = model_file(name_or_path, "config.yaml")
    if path is None:
        raise CheckpointError(f"{name_or_path}: Robometer checkpoint without config.yaml (base_model_id and "
                              "progress head settings come from it)")
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


def detect_backend(config: Dict[str, Any]) -> str:
    """``robometer`` for the RFM layout, ``qwen3vl`` for a plain Qwen3-VL; anything else is an error."""
    architectures = config.get("architectures") or []
    if any(a in ROBOMETER_ARCHITECTURES for a in architectures):
        return "robometer"
    if any(a in QWEN3_VL_ARCHITECTURES for a in architectures):
        return "qwen3vl"
    if is_lerobot_export(config):
        return "robometer"
    raise CheckpointError(f"unsupported architecture {architectures or '(none)'} with model_type "
                          f"{config.get('model_type')!r}; expected one of "
                          f"{list(ROBOMETER_ARCHITECTURES + QWEN3_VL_ARCHITECTURES)}")


def _check_readable(shard: str) -> None:
    """Read the shard's header (not its tensors).

    A truncated or corrupt file is named here instead of failing deep inside from_pretrained.
    """
    from safetensors import safe_open
    try:
        with safe_open(shard, framework="numpy") as handle:
            handle.keys()
    except Exception as exc:
        raise CheckpointError(f"{shard}: corrupt or truncated safetensors file ({exc})") from None


def check_weight_files(path: str) -> List[str]:
    """Return the safetensors files a local checkpoint needs, after checking they are all there."""
    if not is_local(path):
        return []
    names = os.listdir(path)
    index_name = "model.safetensors.index.json"
    if index_name in names:
        with open(os.path.join(path, index_name), encoding="utf-8") as handle:
            shards = sorted(set(json.load(handle)["weight_map"].values()))
        missing = [s for s in shards if not os.path.isfile(os.path.join(path, s))]
        if missing:
            raise CheckpointError(f"{path}: missing weight shard(s) {missing} listed in {index_name}")
        for shard in shards:
            _check_readable(os.path.join(path, shard))
        return shards
    if "model.safetensors" in names:
        _check_readable(os.path.join(path, "model.safetensors"))
        return ["model.safetensors"]
    if any(n.endswith(".bin") or n.endswith(".pt") or n.endswith(".pth") for n in names):
        raise CheckpointError(f"{path}: only PyTorch pickle weights (.bin/.pt); this project loads safetensors only "
                              "(convert them, e.g. with safetensors.torch.save_file)")
    shards = [n for n in names if n.endswith(".safetensors")]
    if shards:
        raise CheckpointError(f"{path}: safetensors shards {sorted(shards)} without model.safetensors.index.json")
    raise CheckpointError(f"{path}: no weights (model.safetensors or sharded safetensors with an index)")


def write_sharded_weights(state: Dict[str, Any], out_dir: str) -> None:
    """Write a state dict the way the published Robometer checkpoint is laid out.

    The language model in ``model-00001-of-00002.safetensors``, vision tower and heads in the second
    shard, and ``model.safetensors.index.json``. Each file is written whole, then moved into place,
    so a reader never sees half a shard.
    """
    from safetensors.torch import save_file

    keys = sorted(state)
    shards = [[k for k in keys if k.startswith("model.language_model.")],
              [k for k in keys if not k.startswith("model.language_model.")]]
    weight_map, total = {}, 0
    for number, shard_keys in enumerate(shards, start=1):
        name = f"model-{number:05d}-of-{len(shards):05d}.safetensors"
        tmp = os.path.join(out_dir, name + ".tmp")
        save_file({k: state[k] for k in shard_keys}, tmp, metadata={"format": "pt"})
        os.replace(tmp, os.path.join(out_dir, name))
        for key in shard_keys:
            weight_map[key] = name
            total += state[key].numel() * state[key].element_size()
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w", encoding="utf-8") as handle:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, handle, indent=2,
                  sort_keys=True)
