# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""RoboReward inputs as its references build them, for the tests and for recording them.

The references are transformers 4.57.1's Qwen3-VL processor with the training settings of
RoboReward's ``qwen-vl-finetune`` fork ("training"), and qwen-vl-utils' frame-list path followed by
the same processor with ``do_resize=False``, as Robometer's RoboReward baseline calls them
("robometer_baseline"). Both need torchvision, so ``record_roboreward_reference.py`` runs them in
a separate venv and stores the result (``data/roboreward_reference.npz``); a test runs them live
where they import. Frames are integer patterns (no float maths), so every machine draws the same.
"""
import hashlib
from typing import Dict, List

import numpy as np

from robo_reward_ros.models.reward_model import Frame

INSTRUCTION = "put the cup in the bowl"
# name: (inputs, frame count, height, width, stamp period in seconds); periods are exact in binary.
CASES = {
    "train_8x224": ("training", 8, 224, 224, 0.5),
    "train_odd_5x224": ("training", 5, 224, 224, 0.5),
    "train_12x240x320": ("training", 12, 240, 320, 0.25),
    "train_40x224_subsampled": ("training", 40, 224, 224, 0.125),
    "train_2x224": ("training", 2, 224, 224, 0.5),
    "baseline_4x224": ("robometer_baseline", 4, 224, 224, 0.5),
    "baseline_odd_3x224": ("robometer_baseline", 3, 224, 224, 0.5),
    "baseline_4x240x320": ("robometer_baseline", 4, 240, 320, 0.5),
}
# What the training processor is told (qwen-vl-finetune argument.py DataArguments defaults, set by
# data_processor.update_processor_pixels).
TRAINING_VIDEO = {"fps": 2, "min_frames": 4, "max_frames": 8, "min_pixels": 256 * 28 * 28,
                  "max_pixels": 1024 * 28 * 28}


def case_frames(name: str) -> List[Frame]:
    """Triangle-wave gradients with a moving block: smooth like a camera, exact in integers."""
    _, count, height, width, period = CASES[name]
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    frames = []
    for i in range(count):
        channels = []
        for c in range(3):
            wave = (x * (2 + c) + y * (3 - c) + 17 * i + 40 * c) % 510
            channels.append(np.where(wave > 255, 510 - wave, wave))
        rgb = np.stack(channels, axis=-1)
        top, left = (7 * i) % (height - 40), (11 * i) % (width - 40)
        rgb[top:top + 40, left:left + 40] = (30 + 5 * i) % 256
        frames.append(Frame(stamp=100.0 + i * period, rgb=rgb.astype(np.uint8)))
    return frames


# Every 97th pixel level is recorded (with a digest of all of them): the record stays small.
LEVEL_STRIDE = 97


def digest(arrays) -> str:
    """Identify frames or pixel levels exactly (the recording's frames, the reference's pixels)."""
    sha = hashlib.sha256()
    for array in arrays:
        sha.update(np.ascontiguousarray(array).tobytes())
    return sha.hexdigest()


def level_sample(levels: np.ndarray) -> np.ndarray:
    """Return the recorded subset of pixel levels."""
    return np.ascontiguousarray(levels).reshape(-1)[::LEVEL_STRIDE]


def patches_to_levels(patches: np.ndarray) -> np.ndarray:
    """Undo the processors' (x / 255 - 0.5) / 0.5 normalisation: uint8 levels, exact for uint8 input."""
    return np.clip(np.rint((np.asarray(patches, np.float64) * 0.5 + 0.5) * 255.0), 0, 255).astype(np.uint8)


def reference_available() -> bool:
    """Return True where the references run: transformers 4.57 (the training pin), torchvision, qwen-vl-utils."""
    try:
        import qwen_vl_utils  # noqa: F401
        import torchvision  # noqa: F401
        import transformers
    except Exception:  # torchvision fails to import beside some torch builds, not only ImportError
        return False
    return transformers.__version__.startswith("4.57.")


def reference_inputs(checkpoint_dir: str, name: str, prompt: str) -> Dict[str, np.ndarray]:
    """Token ids, video grid and pixel levels from the reference for one case (``prompt``: the user text)."""
    from transformers import AutoProcessor
    processor = AutoProcessor.from_pretrained(checkpoint_dir)
    inputs, count, _, _, period = CASES[name]
    frames = case_frames(name)
    if inputs == "training":
        out = _training(processor, frames, period, prompt)
    else:
        out = _baseline(processor, frames, prompt)
    return {"input_ids": out["input_ids"][0].numpy().astype(np.int64),
            "video_grid_thw": out["video_grid_thw"].numpy().astype(np.int64),
            "levels": patches_to_levels(out["pixel_values_videos"].numpy())}


def _training(processor, frames: List[Frame], period: float, prompt: str):
    """Run the fork's ``preprocess_qwen_visual``: the processor samples, sizes and stamps the clip."""
    from transformers.video_utils import VideoMetadata
    video = processor.video_processor
    video.min_frames, video.max_frames = TRAINING_VIDEO["min_frames"], TRAINING_VIDEO["max_frames"]
    video.fps = TRAINING_VIDEO["fps"]
    video.size["shortest_edge"] = TRAINING_VIDEO["min_pixels"]
    video.size["longest_edge"] = TRAINING_VIDEO["max_pixels"]
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": prompt}]}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) + "ANSWER: "
    metadata = VideoMetadata(total_num_frames=len(frames), fps=1.0 / period,
                             frames_indices=list(range(len(frames))))
    return processor(text=[text], videos=[np.stack([f.rgb for f in frames])], video_metadata=[metadata],
                     do_sample_frames=True, return_tensors="pt")


def _baseline(processor, frames: List[Frame], prompt: str):
    """Robometer's baseline: qwen-vl-utils on a frame list (sample_fps 2), then ``do_resize=False``."""
    from PIL import Image
    from qwen_vl_utils import process_vision_info
    video = {"type": "video", "video": [Image.fromarray(f.rgb) for f in frames], "sample_fps": 2.0}
    messages = [{"role": "user", "content": [video, {"type": "text", "text": prompt}]}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) + "ANSWER: "
    _, videos, video_kwargs = process_vision_info(messages, image_patch_size=16, return_video_kwargs=True,
                                                  return_video_metadata=True)
    clips, metadata = zip(*videos)
    return processor(text=[text], videos=list(clips), video_metadata=list(metadata), do_resize=False,
                     return_tensors="pt", **video_kwargs)
