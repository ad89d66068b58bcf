# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""The model options of the offline tools that run the node's loop (replay, lerobot).

``-p NAME=VALUE`` is a reward_node parameter and means there what it means to the node;
the flags are short forms (replay/offline_replay.py: offline_parameter_values).
"""
from __future__ import annotations

import argparse


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="",
                        help="checkpoint directory or hub id (the node's model.id with "
                             "model.preset none); default: the node's model.preset, here demo "
                             "(the small demo model installed with the package). tiny-random: a "
                             "random-weight checkpoint, for checking the plumbing only")
    parser.add_argument("--backend", default="",
                        help="robometer, roboreward, topreward or a plugin backend (default: the "
                             "preset's; with --model, recognised from the checkpoint)")
    parser.add_argument("--precision", default="",
                        help="default: the preset's; fp32 with --model")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                        help="a reward_node parameter (repeatable), e.g. -p inference.rate_hz=2 "
                             "or -p model.preset=demo")
