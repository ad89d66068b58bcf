"""Reuse the KV cache of the part of a TOPReward prompt that did not change.

Attention is causal and Qwen3-VL's mRoPE positions of a token depend only on the tokens before it,
so the keys/values of a shared prompt prefix (same tokens, same video blocks) are exactly those a
full recompute would give. Each query appends only what is new: later video blocks and the text
tail. The reused length is cut back to a video-block boundary so every block's features enter in
one piece (deepstack adds them at their positions), and at least two tokens are recomputed because
the score is read from the second-to-last position.
"""
import inspect
from typing import Hashable, List

import numpy as np
import torch

from robo_reward_ros.models.qwen.sequences import QwenSequence
from robo_reward_ros.models.qwen.vision_feature_cache import VisionFeatureCache, encoder_output


def token_signature(seq: QwenSequence, video_token_id: int) -> List[Hashable]:
    """Token ids, with each vision token also naming its block's pixel content."""
    signature: List[Hashable] = []
    block = -1
    previous = None
    for token in seq.input_ids.tolist():
        if token == video_token_id:
            if previous != video_token_id:
                block += 1
            signature.append((seq.blocks[block].key, token))
        else:
            signature.append(token)
        previous = token
    return signature


def block_spans(input_ids: np.ndarray, video_token_id: int) -> List[tuple]:
    """(start, end) token span of each run of video tokens, in order."""
    is_video = np.concatenate([[0], (input_ids == video_token_id).astype(np.int8), [0]])
    edges = np.diff(is_video)
    return list(zip(np.nonzero(edges == 1)[0].tolist(), np.nonzero(edges == -1)[0].tolist()))


def _cache_argument(model) -> str:
    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _crop(cache, keep: int) -> None:
    remove = cache.get_seq_length() - keep
    if remove > 0:
        cache.crop(-remove)  # negative: number of tokens to drop (accepted by old and new transformers)


class PrefixKVCache:
    """The KV cache of the last TOPReward prompt and what it was computed from."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._cache = None
        self._signature: List[Hashable] = []
        self.reused_tokens = 0
        self.computed_tokens = 0

    def clear(self) -> None:
        self._cache = None
        self._signature = []

    @torch.inference_mode()
    def last_two_logits(self, model, seq: QwenSequence, vision_cache: VisionFeatureCache, merge_size: int,
                        device: torch.device) -> torch.Tensor:
        """Logits at the last two positions of ``seq`` ([2, vocab]), reusing what it can."""
        video_id = int(model.config.video_token_id)
        signature = token_signature(seq, video_id)
        spans = block_spans(seq.input_ids, video_id)
        start = 0
        if self.enabled and self._cache is not None:
            limit = min(len(signature), len(self._signature), len(signature) - 2)
            while start < limit and signature[start] == self._signature[start]:
                start += 1
            for begin, end in spans:
                if begin < start < end:
                    start = begin
                    break
        cache = self._cache if (self.enabled and start > 0) else None
        if cache is not None:
            _crop(cache, start)
        else:
            start = 0
        ids = torch.from_numpy(seq.input_ids)[None].to(device)
        types = torch.from_numpy(seq.mm_token_type_ids)[None].to(device)
        grids = torch.tensor([b.grid for b in seq.blocks], dtype=torch.long, device=device)
        positions, _ = model.model.get_rope_index(ids, types, video_grid_thw=grids)
        is_new = [begin >= start for begin, _ in spans]
        kwargs = {"input_ids": ids[:, start:], "position_ids": positions[:, :, start:], "use_cache": True,
                  "logits_to_keep": 2, _cache_argument(model): cache}
        if any(is_new):
            features = vision_cache.features(model.model.visual, seq.blocks, merge_size, device)
            kwargs["mm_encoder_outputs"] = {"video": encoder_output([f for f, n in zip(features, is_new) if n])}
        output = model(**kwargs)
        if self.enabled:
            self._cache = getattr(output, "cache", None) or getattr(output, "past_key_values", None)
            self._signature = signature
        self.reused_tokens += start
        self.computed_tokens += len(signature) - start
        return output.logits[0, -2:].float()


@torch.inference_mode()
def last_two_logits_uncached(model, seq: QwenSequence, device: torch.device) -> torch.Tensor:
    """Run the reference: one plain forward with the whole clip's pixels, as the processor lays them out."""
    ids = torch.from_numpy(seq.input_ids)[None].to(device)
    types = torch.from_numpy(seq.mm_token_type_ids)[None].to(device)
    patches, video_grid = seq.whole_video()
    pixels = torch.from_numpy(patches).to(device)
    grid = torch.tensor([video_grid], dtype=torch.long, device=device)
    output = model(input_ids=ids, mm_token_type_ids=types, pixel_values_videos=pixels, video_grid_thw=grid,
                   logits_to_keep=2, use_cache=False)
    return output.logits[0, -2:].float()
