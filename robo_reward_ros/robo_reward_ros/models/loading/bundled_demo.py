# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The demo model shipped inside the package, made loadable without a network.

Its weights (trained here with ``robo-reward finetune``) are installed with the package, but a
Robometer checkpoint names a hub model for its tokenizer and processor (``base_model_id``), which
a robot without a network cannot fetch. The first load writes a loadable copy to the cache, with
that base model built offline (Robometer reads only the tokenizer and processor files from it);
later loads reuse the copy. The ``demo`` preset and ``model:=<the installed weights directory>``
both load it this way.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from typing import Callable, Iterator, List, Optional

TRAINED_MODEL_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                 "data", "demo-robometer")
TRAINED_FILES = ("config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
                 "model-00002-of-00002.safetensors")


def cache_dir() -> str:
    """``~/.cache/robo_reward_ros``, or ``ROBO_REWARD_CACHE``."""
    return os.environ.get("ROBO_REWARD_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "robo_reward_ros")


@contextlib.contextmanager
def building(path: str) -> Iterator[None]:
    """Hold the lock of a cache entry while it is checked and built: one process builds, the rest wait.

    A second process that found the entry half written would load a broken model or bag. The
    wait is bounded: a build takes a few minutes at most, so a lock held for ten is a stuck
    process, and the error names the lock rather than hanging the caller for good.
    """
    from filelock import FileLock, Timeout
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    try:
        lock = FileLock(path + ".lock", timeout=BUILD_LOCK_TIMEOUT_SEC)
        lock.acquire()
    except Timeout as exc:
        raise RuntimeError(f"another process has held {path}.lock for {BUILD_LOCK_TIMEOUT_SEC:g} s while "
                           f"building {os.path.basename(path)}; stop it, or remove the entry and the lock") from exc
    try:
        yield
    finally:
        lock.release()


BUILD_LOCK_TIMEOUT_SEC = 600.0


def trained_model_source() -> Optional[str]:
    """Return the installed weights of the demo model, or the copy in the cache; None if neither.

    ``python -m robo_reward_ros.training.demo_model`` leaves the copy in the cache.
    """
    for folder in (TRAINED_MODEL_DIR, os.path.join(cache_dir(), "demo-robometer-trained-weights")):
        if all(os.path.isfile(os.path.join(folder, name)) for name in TRAINED_FILES):
            return folder
    return None


def is_bundled_demo(model: str) -> bool:
    """Tell whether ``model`` is a folder of the demo model's kind: the installed one, a copy, a fine-tune.

    A copy (the source tree's, one a user moved, ``robo-reward finetune``'s output from it) is
    recognised by what makes it the demo's kind: config.json as installed (its dtype aside) and
    the same base model in config.yaml, whose tokenizer and processor are built here offline.
    """
    if not os.path.isdir(model):
        return False
    if os.path.realpath(model) == os.path.realpath(TRAINED_MODEL_DIR):
        return True
    kind = _kind(model)
    return kind is not None and kind == _kind(TRAINED_MODEL_DIR)


def loadable(model: str, log: Callable[[str], None] = print) -> str:
    """Return ``model``, or for a folder of the demo model's kind its loadable copy (base model built here)."""
    return trained_demo_checkpoint(log, source=model) if is_bundled_demo(model) else model


def _kind(folder: str):
    """(config.json without its dtype, config.yaml's base model id), or None if either is unreadable."""
    import json
    import yaml
    try:
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as handle:
            config = json.load(handle)
        with open(os.path.join(folder, "config.yaml"), encoding="utf-8") as handle:
            settings = yaml.safe_load(handle) or {}
    except (OSError, ValueError, yaml.YAMLError):
        return None
    if not isinstance(config, dict) or not isinstance(settings, dict):
        return None
    for key in ("dtype", "torch_dtype"):
        config.pop(key, None)
    return config, (settings.get("model") or {}).get("base_model_id")


def model_files(folder: str) -> List[str]:
    """List the files of a checkpoint folder that a loadable copy takes as they are (all but config.yaml)."""
    return sorted(n for n in os.listdir(folder) if n == "config.json"
                  or n.endswith(".safetensors") or n == "model.safetensors.index.json")


def trained_demo_checkpoint(log: Callable[[str], None] = print,
                            source: Optional[str] = None) -> Optional[str]:
    """Return the demo model as a loadable Robometer checkpoint in the cache; None without the weights.

    ``source``: a copy of the demo model elsewhere (is_bundled_demo); by default the installed
    weights. Rebuilt only when the weights' contents change: the stamp is their names, sizes and
    SHA-256, not where they lie, so the same weights imported from two places (the source tree
    and the installed package, seen in the tests) share the entry instead of rebuilding it in
    turn.
    """
    installed = trained_model_source()
    if source is not None and os.path.realpath(source) == os.path.realpath(TRAINED_MODEL_DIR):
        source = None
    entry = "demo-robometer-trained"
    if source is not None:  # one cache entry per folder
        entry += "-" + hashlib.sha256(os.path.realpath(source).encode()).hexdigest()[:12]
    source = source or installed
    if source is None:
        return None
    path = os.path.join(cache_dir(), entry)
    stamp = os.path.join(path, "source.txt")
    signature = "\n".join(f"{n} {os.path.getsize(os.path.join(source, n))} {_sha256(os.path.join(source, n))}"
                          for n in model_files(source))
    with building(path):
        if os.path.isfile(stamp) and open(stamp).read() == signature:
            return path
        from robo_reward_ros.models.testing import tiny_checkpoints
        log(f"preparing the trained demo model in {path} ...")
        base = os.path.join(path, "base_model")
        if not os.path.isfile(os.path.join(base, "tokenizer_config.json")):
            tiny_checkpoints.build_qwen3vl(base, weights=False)
        copy_trained_model(source, path, base)
        _write_atomically(stamp, lambda handle: handle.write(signature.encode()))
    return path


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_atomically(path: str, write: Callable) -> None:
    """Write ``path`` through a temporary file and a rename.

    A process still loading the entry keeps reading the file it opened, whole; one that opens it
    later gets the new one, whole. Copying in place showed a loader a truncated safetensors file.
    """
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as handle:
            write(handle)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def copy_trained_model(source: str, target: str, base_model_id: str) -> str:
    """Copy the demo model's weights and config.json to ``target``, with a new config.yaml.

    Its ``base_model_id`` (where Robometer reads its tokenizer and processor) is the one given.
    """
    import yaml
    os.makedirs(target, exist_ok=True)
    for name in model_files(source):
        with open(os.path.join(source, name), "rb") as original:
            _write_atomically(os.path.join(target, name), lambda handle: shutil.copyfileobj(original, handle))
    with open(os.path.join(source, "config.yaml")) as handle:
        settings = yaml.safe_load(handle)
    settings.setdefault("model", {})["base_model_id"] = base_model_id
    text = yaml.safe_dump(settings, sort_keys=False)
    _write_atomically(os.path.join(target, "config.yaml"), lambda handle: handle.write(text.encode()))
    return target
