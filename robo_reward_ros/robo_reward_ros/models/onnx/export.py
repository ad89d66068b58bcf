# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Export the Qwen3-VL vision tower to ONNX, one graph per block grid.

The runtime side is ``onnx_vision_runtime``; load a backend with
``vision_runtime="onnx", vision_onnx=PATH``.

The graph is exported for one image block at a fixed grid (e.g. 224 px -> 14x14 patches), since
Qwen3-VL's position interpolation and per-block attention split are traced for that grid. Outputs:
merged tokens and the deepstack features stacked as [layers, tokens, hidden], i.e. exactly what
``VisionFeatureCache`` stores. The grid and patch size go into the graph's metadata so the runtime
picks the right graph for each frame size.

The command is ``robo-reward export-onnx`` (cli/export_onnx.py).
"""
import copy
import os
import warnings
from typing import List, Sequence, Tuple

import numpy as np
import torch

from robo_reward_ros.models.onnx.runtime import (GRID_KEY, PATCH_SIZE_KEY, PROVIDER_ORDER,  # noqa: F401
                                                 OnnxVisionEncoder, select_providers)


class VisionBlockGraph(torch.nn.Module):
    """The vision tower with the grid baked in, returning plain tensors."""

    def __init__(self, vision_model, grid: Sequence[int]) -> None:
        super().__init__()
        self.vision = vision_model
        self.register_buffer("grid", torch.tensor([list(grid)], dtype=torch.long), persistent=False)

    def forward(self, pixel_patches: torch.Tensor):
        output = self.vision(pixel_patches, grid_thw=self.grid, return_dict=True)
        return output.pooler_output, torch.stack(list(output.deepstack_features), dim=0)


def export_vision_onnx(vision_model, grid: Sequence[int], patch_dim: int, path: str, opset: int = 17,
                       patch_size: int = 16) -> str:
    """Export the fp32 vision tower for one block of ``grid`` (t, h, w) to ``path``.

    A tower in another dtype is exported from an fp32 copy, so the caller's model is left as it was.
    """
    import onnx
    if any(p.dtype != torch.float32 for p in vision_model.parameters()):
        vision_model = copy.deepcopy(vision_model).float()
    module = VisionBlockGraph(vision_model.eval(), grid).eval()
    example = torch.zeros(int(np.prod(grid)), patch_dim, dtype=torch.float32)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)  # the grid-derived constants are intended
        torch.onnx.export(module, (example,), path, input_names=["pixel_patches"],
                          output_names=["embeds", "deepstack"], opset_version=opset, dynamo=False)
    graph = onnx.load(path, load_external_data=False)  # a >2 GB tower keeps its external data file
    del graph.metadata_props[:]
    for key, value in ((GRID_KEY, ",".join(str(int(v)) for v in grid)), (PATCH_SIZE_KEY, str(int(patch_size)))):
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(graph, path)
    return path


def export_sizes(model, sizes: Sequence[Tuple[int, int]], out: str) -> List[str]:
    """One graph per size; ``out`` is the file for a single size, else a directory of ``vision_HxW.onnx``."""
    vision = model.model.model.visual
    settings = model.processing.image
    patch_dim = 3 * settings.temporal_patch_size * settings.patch_size ** 2
    single = len(sizes) == 1 and out.endswith(".onnx")
    if not single:
        os.makedirs(out, exist_ok=True)
    paths = []
    for height, width in sizes:
        grid = (1, height // settings.patch_size, width // settings.patch_size)
        path = out if single else os.path.join(out, f"vision_{height}x{width}.onnx")
        paths.append(export_vision_onnx(vision, grid, patch_dim, path, patch_size=settings.patch_size))
    return paths
