# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward export-onnx``: a reward model's vision tower as ONNX graphs, one per frame size.

    robo-reward export-onnx --model DIR_OR_ID --backend robometer --size 224 OUT.onnx
    robo-reward export-onnx --model DIR_OR_ID --size 224 --size 256x320 OUT_DIR

Load a backend with ``vision_runtime="onnx", vision_onnx=PATH`` (the node: ``model.vision_onnx``).
"""
import argparse
import os
import sys
from typing import Optional, Sequence, Tuple


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward export-onnx",
                                     description="Export a reward model's vision tower to ONNX.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--backend", default="auto", choices=("auto", "robometer", "roboreward", "topreward"))
    parser.add_argument("--size", type=parse_size, action="append",
                        help="frame size after the backend's resizing: N or HxW, multiples of 32; repeat for "
                             "several camera sizes (default 224)")
    parser.add_argument("out", help="OUT.onnx for one size, else a directory")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    parent = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(parent):  # before the model loads, not after
        raise FileNotFoundError(f"{parent}: no such folder for {args.out}")
    from robo_reward_ros.models.loading.loader import load_reward_model
    from robo_reward_ros.models.onnx.export import export_sizes
    model = load_reward_model(args.model, backend=args.backend, precision="fp32", device="cpu")
    for path in export_sizes(model, args.size or [(224, 224)], args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
