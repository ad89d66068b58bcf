"""ONNX Runtime path for the Qwen3-VL vision tower (the part that pays on a Jetson: fixed-size
frames, no KV cache, called once per new frame).

The graph is exported for one image block at a fixed grid (e.g. 224 px -> 14x14 patches), since
Qwen3-VL's position interpolation depends on the grid. Outputs: merged tokens and the deepstack
features stacked as [layers, tokens, hidden], i.e. exactly what ``VisionFeatureCache`` stores.

    python -m robo_reward_ros.models.onnx_vision --model DIR_OR_ID --backend robometer --size 224 OUT.onnx
"""
import argparse
import sys
from typing import List, Optional, Sequence

import numpy as np
import torch

PROVIDER_ORDER = ("TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider")


class VisionBlockGraph(torch.nn.Module):
    """The vision tower with the grid baked in, returning plain tensors."""

    def __init__(self, vision_model, grid: Sequence[int]) -> None:
        super().__init__()
        self.vision = vision_model
        self.register_buffer("grid", torch.tensor([list(grid)], dtype=torch.long), persistent=False)

    def forward(self, pixel_patches: torch.Tensor):
        output = self.vision(pixel_patches, grid_thw=self.grid, return_dict=True)
        return output.pooler_output, torch.stack(list(output.deepstack_features), dim=0)


def export_vision_onnx(vision_model, grid: Sequence[int], patch_dim: int, path: str, opset: int = 17) -> str:
    """Export the fp32 vision tower for one block of ``grid`` (t, h, w) to ``path``."""
    vision_model = vision_model.float().eval()
    module = VisionBlockGraph(vision_model, grid).eval()
    example = torch.zeros(int(np.prod(grid)), patch_dim, dtype=torch.float32)
    with torch.no_grad():
        torch.onnx.export(module, (example,), path, input_names=["pixel_patches"],
                          output_names=["embeds", "deepstack"], opset_version=opset, dynamo=False)
    return path


def select_providers(preferred: Optional[Sequence[str]] = None) -> List[str]:
    """TensorRT, then CUDA, then CPU, keeping only what this onnxruntime build offers."""
    import onnxruntime as ort
    available = set(ort.get_available_providers())
    order = list(preferred) if preferred else list(PROVIDER_ORDER)
    chosen = [p for p in order if p in available]
    if "CPUExecutionProvider" not in chosen:
        chosen.append("CPUExecutionProvider")
    return chosen


class OnnxVisionEncoder:
    """Runs an exported vision block graph with onnxruntime."""

    def __init__(self, path: str, providers: Optional[Sequence[str]] = None) -> None:
        import onnxruntime as ort
        self.session = ort.InferenceSession(path, providers=select_providers(providers))

    @property
    def providers(self) -> List[str]:
        return self.session.get_providers()

    def __call__(self, pixel_patches: np.ndarray):
        embeds, deepstack = self.session.run(None, {"pixel_patches": pixel_patches.astype(np.float32)})
        return embeds, deepstack


def main(argv=None) -> int:
    from .loader import load_reward_model
    parser = argparse.ArgumentParser(description="Export a reward model's vision tower to ONNX.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--backend", default="auto", choices=("auto", "robometer", "roboreward", "topreward"))
    parser.add_argument("--size", type=int, default=224, help="frame side after resizing (multiple of 32)")
    parser.add_argument("out")
    args = parser.parse_args(argv)
    model = load_reward_model(args.model, backend=args.backend, precision="fp32", device="cpu")
    vision = model.model.model.visual
    settings = model.processing.image
    side = args.size // settings.patch_size
    patch_dim = 3 * settings.temporal_patch_size * settings.patch_size ** 2
    print(export_vision_onnx(vision, (1, side, side), patch_dim, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
