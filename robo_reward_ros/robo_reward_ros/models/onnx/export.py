"""Export the Qwen3-VL vision tower to ONNX, one graph per block grid.

The runtime side is ``onnx_vision_runtime``; load a backend with
``vision_runtime="onnx", vision_onnx=PATH``.

The graph is exported for one image block at a fixed grid (e.g. 224 px -> 14x14 patches), since
Qwen3-VL's position interpolation and per-block attention split are traced for that grid. Outputs:
merged tokens and the deepstack features stacked as [layers, tokens, hidden], i.e. exactly what
``VisionFeatureCache`` stores. The grid and patch size go into the graph's metadata so the runtime
picks the right graph for each frame size.

    python -m robo_reward_ros.models.onnx.export --model DIR_OR_ID --backend robometer --size 224 OUT.onnx
    python -m robo_reward_ros.models.onnx.export --model DIR_OR_ID --size 224 --size 256x320 OUT_DIR
"""
import argparse
import copy
import os
import sys
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


def parse_size(text: str) -> Tuple[int, int]:
    """``224`` or ``HxW`` (pixels after the backend's resizing, multiples of 32)."""
    parts = text.lower().split("x")
    try:
        sides = [int(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r} is not N or HxW") from None
    if len(sides) == 1:
        sides = sides * 2
    if len(sides) != 2 or any(s <= 0 or s % 32 for s in sides):
        raise argparse.ArgumentTypeError(f"size {text!r}: sides must be positive multiples of 32")
    return sides[0], sides[1]


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


def main(argv=None) -> int:
    from robo_reward_ros.models.loading.loader import load_reward_model
    parser = argparse.ArgumentParser(prog="robo-reward export-onnx",
                                     description="Export a reward model's vision tower to ONNX.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--backend", default="auto", choices=("auto", "robometer", "roboreward", "topreward"))
    parser.add_argument("--size", type=parse_size, action="append",
                        help="frame size after the backend's resizing: N or HxW, multiples of 32; repeat for "
                             "several camera sizes (default 224)")
    parser.add_argument("out", help="OUT.onnx for one size, else a directory")
    args = parser.parse_args(argv)
    parent = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(parent):  # before the model loads, not after
        raise FileNotFoundError(f"{parent}: no such folder for {args.out}")
    model = load_reward_model(args.model, backend=args.backend, precision="fp32", device="cpu")
    for path in export_sizes(model, args.size or [(224, 224)], args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
