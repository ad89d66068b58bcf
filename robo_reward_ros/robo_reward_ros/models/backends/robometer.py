# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Robometer backend (``robometer/Robometer-4B`` layout): per-frame progress, success, preference.

Prompts, token order, image sizing and decoding follow reward-models.md sections 1.3-1.8.
"""
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from robo_reward_ros.models.backends.base import QwenRewardBackend
from robo_reward_ros.models.backends.frame_selection import select_frames
from robo_reward_ros.models.backends.robometer_modeling import (UNQUANTIZED_MODULES, RobometerModel,
                                                                decode_progress)
from robo_reward_ros.models.backends.robometer_special_tokens import (PREF_TOKEN, PROG_TOKEN, SPLIT_TOKEN,
                                                                      add_robometer_tokens)
from robo_reward_ros.models.loading import checkpoint_layout as layout
from robo_reward_ros.models.loading import hub_access
from robo_reward_ros.models.loading.precision import checkpoint_kwargs
from robo_reward_ros.models.qwen.prefix_kv_cache import PrefixKVCache
from robo_reward_ros.models.qwen.processing import QwenProcessing
from robo_reward_ros.models.qwen.sequences import QwenSequence, collate, vision_inputs
from robo_reward_ros.models.qwen.vision_feature_cache import VisionBlock, feature_source, pixel_key
from robo_reward_ros.models.qwen.vision_preprocessing import image_patches, resize_rgb, smart_resize
from robo_reward_ros.models.reward_model import Capabilities, Frame, ModelOutput, check_frames

PROGRESS_PROMPT = (
    "The task for the robot is '{task}'. Given the trajectory video, predict the task progress at each frame, "
    "how far along the robot is towards completing the task, a float between 0 and 1, where 0 is the starting "
    "state and 1 is when the task is completed. If the robot is not performing the same task, predict 0 progress.")
PREFERENCE_PROMPT = (
    "Given these two trajectories for the task '{task}', evaluate which one makes more progress towards the task. "
    "Return A for the first trajectory and B for the second trajectory.")
PREFERENCE_PROGRESS_SUFFIX = (
    " Also predict the task progress at each frame of the first trajectory, how far along the robot is towards "
    "completing the task, a float between 0 and 1, where 0 is the starting state and 1 is when the task is "
    "completed. If the robot is not performing the same task, predict 0 progress.")
# qwen-vl-utils' resize for images with image_patch_size=16 (reward-models.md 1.5).
IMAGE_FACTOR, IMAGE_MIN_PIXELS, IMAGE_MAX_PIXELS = 32, 4096, 16777216
TEMPLATE_KWARGS = {"add_generation_prompt": False, "add_vision_id": True, "enable_thinking": False}


class RobometerBackend(QwenRewardBackend):
    """Loads the published layout as it is and scores windows of frames."""

    name = "robometer"
    capabilities = Capabilities(progress=True, success=True, preference=True)
    batches_clips = True  # right-padded clips in one forward

    def __init__(self, model_id: str, precision: str = "bf16", device: str = "auto", max_frames: Optional[int] = None,
                 frame_selection: str = "linspace", pad_short_windows: bool = False, cache_vision: bool = True,
                 vision_runtime: str = "torch", vision_onnx: Optional[str] = None,
                 onnx_providers: Optional[Sequence[str]] = None, cache_prefix: bool = True) -> None:
        """``pad_short_windows``: repeat the last frame up to ``max_frames`` as the training loaders do.

        The published inference code passes short windows as they are. ``cache_prefix`` keeps the KV
        cache of the instruction and the window's first frame between single-clip queries.
        """
        super().__init__(model_id, device, cache_vision, vision_runtime, vision_onnx, onnx_providers)
        self.prefix_cache = PrefixKVCache(enabled=cache_prefix)
        self.precision = precision
        config_json = layout.load_config_json(model_id)
        if layout.detect_backend(config_json) != "robometer":
            raise layout.CheckpointError(f"{model_id}: architectures {config_json.get('architectures')} is not "
                                         f"Robometer's {list(layout.ROBOMETER_ARCHITECTURES)}")
        self.lerobot_export = layout.is_lerobot_export(config_json)
        settings = layout.load_robometer_yaml(model_id, config_json)
        model_cfg, data_cfg = settings.get("model", {}), settings.get("data", {})
        loss_cfg, training_cfg = settings.get("loss", {}), settings.get("training", {})
        if loss_cfg.get("progress_loss_type", "discrete") != "discrete":
            raise layout.CheckpointError(f"{model_id}: progress_loss_type {loss_cfg.get('progress_loss_type')!r}; "
                                         "only the published discrete progress head is supported")
        if not model_cfg.get("use_per_frame_progress_token", True):
            raise layout.CheckpointError(f"{model_id}: use_per_frame_progress_token is false; only the published "
                                         "per-frame progress token mode is supported")
        self.progress_bins = int(loss_cfg.get("progress_discrete_bins", 10))
        self.max_frames = int(max_frames or data_cfg.get("max_frames", 8))
        self.frame_selection = frame_selection
        self.pad_short_windows = bool(pad_short_windows)
        self.predict_pref_progress = bool(training_cfg.get("predict_pref_progress", True))
        self._check_weight_files(model_id)
        base = model_cfg.get("base_model_id")
        if not base:
            raise layout.CheckpointError(f"{model_id}: config.yaml has no model.base_model_id")
        try:
            self.processing = QwenProcessing.from_pretrained(base, padding_side="right")
        except (OSError, ValueError) as exc:
            hint = "" if layout.is_local(base) else (
                f" ({hub_access.why_not_here(base)}; download it where the hub is reachable (hf "
                f"download {base} --local-dir DIR) and set model.base_model_id in "
                f"{os.path.join(model_id, 'config.yaml')} to DIR)")
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise layout.CheckpointError(f"{model_id}: tokenizer/processor of base model {base!r} could not be "
                                         f"loaded: {reason}{hint}") from exc
        self.token_ids = add_robometer_tokens(self.processing.tokenizer)
        backbone = config_json["vlm_config"] if self.lerobot_export else config_json
        vocab = int(backbone.get("text_config", {}).get("vocab_size") or backbone.get("vocab_size") or 0)
        if len(self.processing.tokenizer) > vocab:
            raise layout.CheckpointError(f"{model_id}: tokenizer has {len(self.processing.tokenizer)} tokens after "
                                         f"adding Robometer's, the embedding table only {vocab}")
        self.model = self._load_weights(model_id, config_json)

    def _check_weight_files(self, model_id: str) -> None:
        """Fail early on missing shards (a benchmark subclass that builds weights in memory skips it)."""
        layout.check_weight_files(model_id)

    def _load_weights(self, model_id: str, config_json: Dict[str, Any]) -> RobometerModel:
        from transformers import Qwen3VLConfig
        if self.lerobot_export:  # the backbone's config is serialised inside LeRobot's own config.json
            backbone = {k: v for k, v in config_json["vlm_config"].items() if k != "model_type"}
            config = Qwen3VLConfig.from_dict(backbone)
        else:
            config = Qwen3VLConfig.from_pretrained(model_id)
        config.robometer_progress_bins = self.progress_bins
        kwargs = checkpoint_kwargs(model_id, config_json, self.precision, self.device, UNQUANTIZED_MODULES)
        if self.lerobot_export:
            kwargs["key_mapping"] = layout.LEROBOT_KEY_MAPPING
        model = RobometerModel.from_pretrained(model_id, config=config, **kwargs)
        return model.eval()

    # -- prompts ---------------------------------------------------------------------------------------
    def _image_block(self, rgb: np.ndarray) -> VisionBlock:
        height, width = smart_resize(rgb.shape[0], rgb.shape[1], IMAGE_FACTOR, IMAGE_MIN_PIXELS, IMAGE_MAX_PIXELS)
        image = self.processing.image

        def make_patches() -> np.ndarray:
            return image_patches(resize_rgb(rgb, height, width), image.patch_size, image.merge_size,
                                 image.temporal_patch_size, image.mean, image.std)

        grid = (1, height // image.patch_size, width // image.patch_size)
        return VisionBlock(key=(pixel_key(rgb), height, width), grid=grid, make_patches=make_patches)

    def _sequence(self, content: List[Dict[str, str]], frames: Sequence[Frame]) -> QwenSequence:
        messages = [{"role": "user", "content": content}]
        text = self.processing.render(messages, **TEMPLATE_KWARGS)
        blocks = [self._image_block(f.rgb) for f in frames]
        merge = self.processing.image.merge_size ** 2
        text = self.processing.expand(text, [b.num_tokens // merge for b in blocks])
        ids = self.processing.encode(text)
        return QwenSequence(ids, self.processing.mm_token_type_ids(ids), blocks, "image")

    @staticmethod
    def _frames_content(frames: Sequence[Frame]) -> List[Dict[str, str]]:
        content: List[Dict[str, str]] = []
        for _ in frames:
            content.append({"type": "image"})
            content.append({"type": "text", "text": PROG_TOKEN})
        return content

    def progress_sequence(self, instruction: str, frames: Sequence[Frame]) -> QwenSequence:
        content = [{"type": "text", "text": PROGRESS_PROMPT.format(task=instruction)}] + self._frames_content(frames)
        return self._sequence(content, frames)

    def preference_sequence(self, instruction: str, clip_a: Sequence[Frame], clip_b: Sequence[Frame]) -> QwenSequence:
        prompt = PREFERENCE_PROMPT.format(task=instruction)
        if self.predict_pref_progress:
            prompt += PREFERENCE_PROGRESS_SUFFIX
        content = [{"type": "text", "text": prompt}, {"type": "text", "text": "This is Trajectory A. "}]
        content += self._frames_content(clip_a)
        content += [{"type": "text", "text": SPLIT_TOKEN}, {"type": "text", "text": "This is Trajectory B. "}]
        content += self._frames_content(clip_b)
        content += [{"type": "text", "text": "Now predict the preference between the two trajectories."},
                    {"type": "text", "text": PREF_TOKEN}]
        return self._sequence(content, list(clip_a) + list(clip_b))

    # -- inference -------------------------------------------------------------------------------------
    @torch.inference_mode()
    def last_hidden_states(self, sequences: Sequence[QwenSequence], use_cache: Optional[bool] = None) -> torch.Tensor:
        """Post-final-norm hidden states (``hidden_states[-1]`` upstream) of a right-padded batch."""
        use_cache = self.vision_cache.enabled if use_cache is None else use_cache
        pad_id = self.processing.tokenizer.pad_token_id
        inputs = collate(sequences, pad_id, self.device)
        inputs.update(vision_inputs(self.model.model, sequences, feature_source(self.vision_cache, use_cache),
                                    self.processing.image.merge_size, self.device))
        return self.model.model(**inputs).last_hidden_state

    def select(self, frames: Sequence[Frame]) -> List[Frame]:
        check_frames(frames)
        return select_frames(list(frames), self.max_frames, self.frame_selection, self.pad_short_windows)

    @torch.inference_mode()
    def score_batch(self, instruction: str, clips: Sequence[Sequence[Frame]],
                    use_cache: Optional[bool] = None) -> List[ModelOutput]:
        """Several clips (e.g. cameras) in one forward; each selected as ``select`` does."""
        return self.score_items([(instruction, clip) for clip in clips], use_cache)

    @torch.inference_mode()
    def score_items(self, items: Sequence[Tuple[str, Sequence[Frame]]],
                    use_cache: Optional[bool] = None) -> List[ModelOutput]:
        """Clips with their own instructions in one forward (a reward server batching several robots)."""
        chosen = [self.select(clip) for _, clip in items]
        sequences = [self.progress_sequence(instruction, clip) for (instruction, _), clip in zip(items, chosen)]
        prog_id = self.token_ids[PROG_TOKEN]
        token_positions = [np.nonzero(seq.input_ids == prog_id)[0] for seq in sequences]
        use_cache = self.vision_cache.enabled if use_cache is None else use_cache
        first_row = 0
        if use_cache and self.prefix_cache.enabled and len(sequences) == 1:
            output, first_row = self.prefix_cache.forward(
                self.model.model, self.model.model, sequences[0], self.vision_cache,
                self.processing.image.merge_size, self.device, read_from=int(token_positions[0][0]))
            hidden = output.last_hidden_state
        else:
            hidden = self.last_hidden_states(sequences, use_cache)
        outputs = []
        for row, (positions, clip) in enumerate(zip(token_positions, chosen)):
            if len(positions) != len(clip):
                raise RuntimeError(f"{len(positions)} progress tokens for {len(clip)} frames")
            rows = torch.from_numpy(positions - first_row)
            progress_logits, success_logits, _ = self.model.head_outputs(hidden[row, rows])
            progress = decode_progress(progress_logits).float().cpu().numpy()
            success = torch.sigmoid(success_logits[:, 0]).float().cpu().numpy()
            outputs.append(_per_unique_stamp(progress, success, [f.stamp for f in clip], self.name))
        return outputs

    def score(self, instruction: str, frames: Sequence[Frame]) -> ModelOutput:
        return self.score_batch(instruction, [frames])[0]

    @torch.inference_mode()
    def prefer(self, instruction: str, clip_a: Sequence[Frame], clip_b: Sequence[Frame]) -> float:
        seq = self.preference_sequence(instruction, self.select(clip_a), self.select(clip_b))
        hidden = self.last_hidden_states([seq])
        position = int(np.nonzero(seq.input_ids == self.token_ids[PREF_TOKEN])[0][-1])
        _, _, preference_logit = self.model.head_outputs(hidden[0, position:position + 1])
        return float(torch.sigmoid(preference_logit.float())[0, 0])

    def reset(self) -> None:
        super().reset()
        self.prefix_cache.clear()


def _per_unique_stamp(progress: np.ndarray, success: np.ndarray, stamps: List[float], backend: str) -> ModelOutput:
    """One value per distinct frame; a padded repeat keeps its last copy, so progress[-1] is upstream's reward."""
    last: Dict[float, int] = {}
    for index, stamp in enumerate(stamps):
        last[stamp] = index
    order = sorted(last, key=lambda s: last[s])
    keep = [last[s] for s in order]
    return ModelOutput(progress=np.clip(progress[keep], 0.0, 1.0), success=success[keep], stamps=np.asarray(order),
                       backend=backend, input_stamps=np.asarray(stamps))
