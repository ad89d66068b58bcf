# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""``robo-reward quantize``: save a pre-quantized checkpoint, so a robot does not re-quantize at start.

    robo-reward quantize --model DIR_OR_ID [--precision nf4|int8|int8wo|int4wo] OUT_DIR

What is written is described in models/loading/quantized_checkpoint.py.
"""
import argparse
import sys
from typing import Optional, Sequence

from robo_reward_ros.models.loading.choices import QUANTIZED
from robo_reward_ros.models.loading.quantized_checkpoint import save_quantized


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robo-reward quantize",
                                     description="Save a pre-quantized reward model checkpoint.")
    parser.add_argument("--model", required=True, help="model id or local directory")
    parser.add_argument("--backend", default="auto", choices=("auto", "robometer", "roboreward", "topreward"))
    parser.add_argument("--precision", default="nf4", choices=QUANTIZED)
    parser.add_argument("--device", default="auto")
    parser.add_argument("out_dir")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    out = save_quantized(args.model, args.out_dir, args.precision, args.device, args.backend)
    print(f"quantize: {args.model} in {args.precision} -> {out}/ (loads with precision {args.precision})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
