"""What the demo and the offline tools build on first use: the tiny checkpoint and the episode bags.

They are cached under ``~/.cache/robo_reward_ros`` (``ROBO_REWARD_CACHE`` overrides). Nothing is downloaded.
"""
from __future__ import annotations

import os
from typing import List, Optional

ROBOT_CLIPS_ENV = "ROBO_REWARD_ROBOT_CLIPS"


def cache_dir() -> str:
    return os.environ.get("ROBO_REWARD_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "robo_reward_ros")


def demo_checkpoint(log=print) -> str:
    """Return a tiny Robometer-layout checkpoint (random weights), built once."""
    path = os.path.join(cache_dir(), "demo-robometer-tiny")
    if not os.path.isfile(os.path.join(path, "config.yaml")):
        from robo_reward_ros.models.testing.tiny_checkpoints import build_checkpoint
        log(f"building a tiny offline Robometer checkpoint in {path} ...")
        build_checkpoint("robometer", path)
    return path


TRAINED_MODEL_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                                 "demo-robometer")
TRAINED_FILES = ("config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
                 "model-00002-of-00002.safetensors")


def trained_model_source() -> Optional[str]:
    """Return the committed weights of the demo model, or the copy in the cache; None if neither.

    The committed weights were trained here with ``robo-reward finetune``;
    ``python -m robo_reward_ros.training.demo_model`` leaves the copy in the cache.
    """
    for folder in (TRAINED_MODEL_DIR, os.path.join(cache_dir(), "demo-robometer-trained-weights")):
        if all(os.path.isfile(os.path.join(folder, name)) for name in TRAINED_FILES):
            return folder
    return None


def trained_demo_checkpoint(log=print) -> Optional[str]:
    """Return the trained demo model as a loadable Robometer checkpoint in the cache; None without the weights.

    The checkpoint has its weights and config.json, and a config.yaml whose ``base_model_id`` is a
    tokenizer/processor directory built offline (Robometer reads only those files from its base model).
    """
    source = trained_model_source()
    if source is None:
        return None
    path = os.path.join(cache_dir(), "demo-robometer-trained")
    stamp = os.path.join(path, "source.txt")
    signature = source + "\n" + "\n".join(str(os.path.getsize(os.path.join(source, n))) + " "
                                          + str(int(os.path.getmtime(os.path.join(source, n))))
                                          for n in TRAINED_FILES)
    if os.path.isfile(stamp) and open(stamp).read() == signature:
        return path
    from robo_reward_ros.models.testing import tiny_checkpoints
    log(f"preparing the trained demo model in {path} ...")
    base = os.path.join(path, "base_model")
    if not os.path.isfile(os.path.join(base, "tokenizer_config.json")):
        tiny_checkpoints.build_qwen3vl(base, weights=False)
    copy_trained_model(source, path, base)
    with open(stamp, "w") as handle:
        handle.write(signature)
    return path


def copy_trained_model(source: str, target: str, base_model_id: str) -> str:
    """Copy the demo model's weights and config.json to ``target``, with a new config.yaml.

    Its ``base_model_id`` (where Robometer reads its tokenizer and processor) is the one given.
    """
    import shutil
    import yaml
    os.makedirs(target, exist_ok=True)
    for name in TRAINED_FILES:
        shutil.copyfile(os.path.join(source, name), os.path.join(target, name))
    with open(os.path.join(source, "config.yaml")) as handle:
        settings = yaml.safe_load(handle)
    settings.setdefault("model", {})["base_model_id"] = base_model_id
    with open(os.path.join(target, "config.yaml"), "w") as handle:
        yaml.safe_dump(settings, handle, sort_keys=False)
    return target


def demo_sim_bags(scenarios=(), steps: int = 100, log=print) -> List[str]:
    from robo_reward_ros.evaluation.episode_sets import make_sim_bags
    out = os.path.join(cache_dir(), "bags", "metaworld")
    return make_sim_bags(out, scenarios, steps, log=log)


def robot_clips_dir() -> Optional[str]:
    """Return the shared real-robot clips, when this checkout has them.

    Either ``../shared/data/robot-clips`` next to the repository, or ``ROBO_REWARD_ROBOT_CLIPS``.
    """
    candidates = [os.environ.get(ROBOT_CLIPS_ENV, "")]
    here = os.path.dirname(os.path.abspath(__file__))
    for up in range(3, 7):  # source tree or an install prefix: look a few levels up
        root = os.path.abspath(os.path.join(here, *[".."] * up))
        candidates.append(os.path.join(root, "shared", "data", "robot-clips"))
        candidates.append(os.path.join(os.path.dirname(root), "shared", "data", "robot-clips"))
    return next((c for c in candidates if c and os.path.isdir(c)), None)


def demo_clip_bags(log=print) -> List[str]:
    folder = robot_clips_dir()
    if folder is None:
        return []
    from robo_reward_ros.evaluation.episode_sets import make_video_bags, robot_clip_videos
    videos = robot_clip_videos(folder)
    return make_video_bags(os.path.join(cache_dir(), "bags", "robot-clips"),
                           [v for v, _ in videos], [t for _, t in videos], log=log)
