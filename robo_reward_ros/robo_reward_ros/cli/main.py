# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""`robo-reward COMMAND ...`: one entry point for the offline tools.

Each command lives in its own module and is imported only when used, so `robo-reward --help`
does not load torch. A user's mistake (a folder that is not a model, a device this machine lacks,
a path that does not exist) ends in one line naming the command, whichever module raised it;
``ROBO_REWARD_TRACEBACK=1`` shows the traceback instead.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import Optional, Sequence

COMMANDS = {
    "score": ("robo_reward_ros.cli.score", "score frames or a video with a reward model"),
    "tiny-checkpoint": ("robo_reward_ros.cli.tiny_checkpoint",
                        "build a tiny offline checkpoint in a published layout"),
    "quantize": ("robo_reward_ros.cli.quantize",
                 "save a pre-quantized (nf4/int8, torchao int8wo/int4wo) checkpoint"),
    "export-onnx": ("robo_reward_ros.cli.export_onnx", "export a model's vision tower to ONNX"),
    "sim-bags": ("robo_reward_ros.cli.sim_bags",
                 "render Meta-World episodes with known outcomes into ROS 2 bags"),
    "video-bags": ("robo_reward_ros.cli.video_bags", "turn recorded videos into ROS 2 bags"),
    "replay": ("robo_reward_ros.cli.replay",
               "replay bags through the reward pipeline (or the live node): logs and plots"),
    "render-layout": ("robo_reward_ros.cli.render_layout",
                      "draw a Foxglove layout's panels from a replayed episode's MCAP (PNG)"),
    "lerobot": ("robo_reward_ros.cli.lerobot",
                "score a local LeRobot dataset (v3); --relabel writes a copy with reward columns"),
    "eval": ("robo_reward_ros.cli.evaluate",
             "reward-quality metrics of replayed episodes; --confusion: the video x instruction matrix"),
    "rank": ("robo_reward_ros.cli.rank",
             "rank episodes or windows of bags and LeRobot datasets by the reward model (Parquet/CSV)"),
    "filter": ("robo_reward_ros.cli.filter",
               "write a ranking's best episodes or spans as a new LeRobot v3 dataset or bag folder (+ manifest)"),
    "calibrate": ("robo_reward_ros.cli.calibrate",
                  "choose a model's monitor thresholds from labelled episodes; writes monitor_defaults.yaml"),
    "serve": ("robo_reward_ros.cli.serve",
              "host one reward backend on Ray Serve for several robots (model.backend remote)"),
    "finetune": ("robo_reward_ros.cli.finetune",
                 "fine-tune a Robometer-layout model on episode bags (heads, LoRA or full)"),
    "poise": ("robo_reward_ros.cli.poise",
              "edit per-clip scores so that no pairwise preference is reversed (fine-tuning labels)"),
}


def usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: robo-reward COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "robo-reward COMMAND --help shows a command's options."]
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"robo-reward: unknown command '{command}'\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    try:
        return module.main(rest)
    except USER_ERRORS as exc:
        if os.environ.get("ROBO_REWARD_TRACEBACK"):
            raise
        print(f"robo-reward {command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


# What bad input raises (CheckpointError is a RuntimeError); anything else is a bug: a traceback.
USER_ERRORS = (ValueError, OSError, RuntimeError, ImportError)


if __name__ == "__main__":
    sys.exit(main())
