# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Warnings from libraries that a user of this package cannot act on, kept off the console.

transformers imports torchao whenever it is installed, whatever the precision (its quantizer
registry does, at the first ``from_pretrained``). torchao then logs "Failed to load ..." for each
compiled extension built for hardware this machine lacks, and torch logs two deprecation
warnings about torchao's enums. All are log records of their own loggers, raised to ERROR here;
the project imports torchao itself only for an int8wo/int4wo precision. The package's
``__init__`` calls ``quiet()``: it imports nothing, so the node and the core stay light.
"""
import logging

# bitsandbytes on the CPU (nf4 there is for tests) asks for the optional "kernels" package.
QUIET_LOGGERS = ("torchao", "torch.utils._pytree", "bitsandbytes.backends.cpu.ops")


def quiet() -> None:
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
