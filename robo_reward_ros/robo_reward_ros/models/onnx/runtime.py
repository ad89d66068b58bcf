# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The vision tower through ONNX Runtime at inference (``vision_runtime="onnx"``).

On a Jetson the vision tower is the part that pays to hand to TensorRT: fixed-size frames, no KV
cache, run once per new frame. A graph covers one block grid (the frame size after the backend's
resizing), recorded in its metadata by ``onnx_vision.export_vision_onnx``; Qwen3-VL's position
interpolation and per-block attention split are traced as constants, so the graph cannot take
dynamic sizes. A directory may hold one graph per camera size; a block with no matching graph
gets an error naming the size to export. The encoder plugs into ``VisionFeatureCache``, so the
backends' caching and batching are unchanged.
"""
import logging
import os
from typing import Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np
import torch

from robo_reward_ros.models.qwen.vision_feature_cache import BlockFeatures, VisionBlock

LOG = logging.getLogger(__name__)

PROVIDER_ORDER = ("TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider")
VISION_RUNTIMES = ("torch", "onnx")
GRID_KEY = "robo_reward.grid"  # "t,h,w" in patches
PATCH_SIZE_KEY = "robo_reward.patch_size"  # pixels per patch side, to name sizes in pixels
Grid = Tuple[int, int, int]


def select_providers(preferred: Optional[Sequence[str]] = None) -> List[str]:
    """TensorRT, then CUDA, then CPU, keeping only what this onnxruntime build offers."""
    import onnxruntime as ort
    available = set(ort.get_available_providers())
    order = list(preferred) if preferred else list(PROVIDER_ORDER)
    chosen = [p for p in order if p in available]
    if "CPUExecutionProvider" not in chosen:
        chosen.append("CPUExecutionProvider")
    return chosen


def _provider_options(name: str, graph_path: str):
    """Keep TensorRT engines on disk: TensorRT builds an engine per graph on first use (minutes on a Jetson)."""
    if name == "TensorrtExecutionProvider":
        return name, {"trt_engine_cache_enable": True,
                      "trt_engine_cache_path": os.path.dirname(os.path.abspath(graph_path))}
    return name


class OnnxVisionEncoder:
    """One exported vision block graph in an onnxruntime session."""

    def __init__(self, path: str, providers: Optional[Sequence[str]] = None) -> None:
        import onnxruntime as ort
        self.path = path
        chosen = [_provider_options(name, path) for name in select_providers(providers)]
        self.session = ort.InferenceSession(path, providers=chosen)
        meta = self.session.get_modelmeta().custom_metadata_map
        self.grid: Optional[Grid] = tuple(int(v) for v in meta[GRID_KEY].split(",")) if GRID_KEY in meta else None
        self.patch_size: Optional[int] = int(meta[PATCH_SIZE_KEY]) if PATCH_SIZE_KEY in meta else None

    @property
    def providers(self) -> List[str]:
        return self.session.get_providers()

    def __call__(self, pixel_patches: np.ndarray):
        embeds, deepstack = self.session.run(None, {"pixel_patches": pixel_patches.astype(np.float32)})
        return embeds, deepstack


def graph_paths(path: str) -> List[str]:
    """``path`` itself if it is a file, else the ``*.onnx`` files in the directory."""
    if os.path.isfile(path):
        return [path]
    if os.path.isdir(path):
        found = sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".onnx"))
        if found:
            return found
        raise FileNotFoundError(f"no .onnx vision graphs in {path}; export one with robo-reward export-onnx")
    raise FileNotFoundError(f"ONNX vision graph {path} does not exist")


def _pixels(grid: Grid, patch_size: Optional[int]) -> str:
    if patch_size is None:
        return f"grid {grid[1]}x{grid[2]} patches"
    return f"{grid[1] * patch_size}x{grid[2] * patch_size} px"


class OnnxBlockEncoder:
    """Encodes vision blocks with the graph exported for each block's grid (``encode_blocks``' signature)."""

    def __init__(self, path: str, providers: Optional[Sequence[str]] = None) -> None:
        self.path = path
        self.graphs: Dict[Grid, OnnxVisionEncoder] = {}
        for graph_path in graph_paths(path):
            encoder = OnnxVisionEncoder(graph_path, providers)
            if encoder.grid is None:
                raise ValueError(f"{graph_path} records no block grid ({GRID_KEY}); re-export it with "
                                 "robo-reward export-onnx")
            self.graphs[encoder.grid] = encoder
        first = next(iter(self.graphs.values()))
        self.provider = first.providers[0]
        LOG.info("vision encoder: ONNX Runtime %s on %s (sizes: %s)", path, self.provider, self.sizes())

    def sizes(self) -> str:
        return ", ".join(_pixels(g, e.patch_size) for g, e in self.graphs.items())

    def graph_for(self, grid: Sequence[int]) -> OnnxVisionEncoder:
        grid = tuple(int(v) for v in grid)
        if grid not in self.graphs:
            patch = next(iter(self.graphs.values())).patch_size
            size = f"{grid[1] * patch}x{grid[2] * patch}" if patch else "HxW"
            raise ValueError(f"frames are resized to {_pixels(grid, patch)} for the vision tower, but {self.path} "
                             f"has ONNX vision graphs only for {self.sizes()}; export one with "
                             f"`robo-reward export-onnx --model MODEL --backend BACKEND --size {size} OUT`")
        return self.graphs[grid]

    def __call__(self, vision_model, blocks: Sequence[VisionBlock], merge_size: int,
                 device: torch.device) -> Dict[Hashable, BlockFeatures]:
        """One session run per block (a graph holds one grid); features in the tower's dtype."""
        dtype = getattr(vision_model, "dtype", torch.float32)
        out: Dict[Hashable, BlockFeatures] = {}
        for block in blocks:
            embeds, deepstack = self.graph_for(block.grid)(block.make_patches())
            embeds_t = torch.from_numpy(embeds).to(device=device, dtype=dtype)
            deep_t = torch.from_numpy(deepstack).to(device=device, dtype=dtype)
            out[block.key] = BlockFeatures(embeds_t, list(deep_t.unbind(0)))
        return out


def vision_encoder(runtime: str = "torch", onnx_path: Optional[str] = None,
                   providers: Optional[Sequence[str]] = None) -> Optional[OnnxBlockEncoder]:
    """Check the backends' option: None for the torch tower, else the ONNX encoder for ``onnx_path``."""
    if runtime not in VISION_RUNTIMES:
        raise ValueError(f"vision_runtime must be one of {VISION_RUNTIMES}, got {runtime!r}")
    if runtime == "torch":
        if onnx_path:
            raise ValueError("vision_onnx was given but vision_runtime is 'torch'; pass vision_runtime='onnx'")
        return None
    if not onnx_path:
        raise ValueError("vision_runtime='onnx' needs vision_onnx: an exported .onnx file or a directory of them")
    return OnnxBlockEncoder(onnx_path, providers)
