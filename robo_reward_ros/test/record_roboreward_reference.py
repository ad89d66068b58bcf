# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Record RoboReward's reference inputs (``data/roboreward_reference.npz``) for the tests.

The references need torchvision, which does not import beside the project's torch, so this runs in
a separate venv (Python 3.11, x86_64: pip takes torch 2.14.1 / torchvision 0.29.1 from local disk)::

    python3.11 -m venv /tmp/rr-ref
    /tmp/rr-ref/bin/pip install torch==2.14.1 torchvision==0.29.1 transformers==4.57.1 qwen-vl-utils==0.0.14
    # the tiny RoboReward checkpoint, built with the project's venv (tokenizer + chat template):
    robo-reward tiny-checkpoint --layout roboreward /tmp/rr-ckpt
    cd robo_reward_ros && PYTHONPATH=.:test /tmp/rr-ref/bin/python test/record_roboreward_reference.py /tmp/rr-ckpt

Only the tokenizer, chat template and processor settings of the checkpoint are read.
"""
import argparse
import importlib.metadata
import os
import sys

import numpy as np

from robo_reward_ros.models.backends.roboreward import RUBRIC_PROMPT
from roboreward_reference import (CASES, INSTRUCTION, case_frames, digest, level_sample, reference_available,
                                  reference_inputs)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "roboreward_reference.npz")


def main(argv=None) -> int:
    """Write one entry per case: ids, grid, pixel levels (digest + sample), and the frames' digest."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a tiny RoboReward checkpoint directory")
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args(argv)
    if not reference_available():
        print("needs transformers 4.57.x, torchvision and qwen-vl-utils", file=sys.stderr)
        return 1
    record = {"versions": np.array([f"{name} {importlib.metadata.version(name)}" for name in
                                    ("transformers", "torch", "torchvision", "qwen-vl-utils")])}
    for name in CASES:
        prompt = RUBRIC_PROMPT.format(task=INSTRUCTION)
        reference = reference_inputs(args.checkpoint, name, prompt)
        record[f"{name}/input_ids"] = reference["input_ids"]
        record[f"{name}/video_grid_thw"] = reference["video_grid_thw"]
        record[f"{name}/levels_sha256"] = np.array(digest([reference["levels"]]))
        record[f"{name}/levels_sample"] = level_sample(reference["levels"])
        record[f"{name}/frames_sha256"] = np.array(digest(f.rgb for f in case_frames(name)))
        print(name, record[f"{name}/video_grid_thw"].tolist(), len(record[f"{name}/input_ids"]), "ids")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    np.savez_compressed(args.out, **record)
    print("wrote", args.out, os.path.getsize(args.out), "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
