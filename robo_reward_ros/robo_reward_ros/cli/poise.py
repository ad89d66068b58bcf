# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
r"""``robo-reward poise``: edit per-clip scores so that no pairwise preference is reversed (POISE).

    robo-reward poise --scores scores.jsonl --pairs pairs.jsonl --out edited.jsonl [--report poise.json]
    robo-reward finetune --model BASE --episodes BAGS --clip-scores edited.jsonl --out DIR

Scores: one row per clip (``id``, ``instruction``, ``score``); pairs: one row per preference
(``instruction``, ``a``, ``b``, ``preferred``: a, b or the clip's id); JSONL or CSV (by the file's
extension). Writes the clips with the edited ``score`` and their ``original_score``, and prints
the reversals before and after per instruction. Method and definitions: training/poise.py and
docs/fine-tuning.md ("Scores that agree with the preferences").
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Optional, Sequence


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="robo-reward poise", description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--scores", required=True, metavar="JSONL_OR_CSV", help="clips: id, instruction, score")
    p.add_argument("--pairs", required=True, metavar="JSONL_OR_CSV",
                   help="preferences: instruction, a, b, preferred (a, b or the clip's id)")
    p.add_argument("--out", required=True, metavar="JSONL_OR_CSV",
                   help="the clips with edited scores (finetune --clip-scores reads it)")
    p.add_argument("--report", default="", metavar="JSON", help="also write the counts per instruction here")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from robo_reward_ros.training.poise import format_table, poise, read_clips, read_pairs, write_clips
    result = poise(read_clips(args.scores), read_pairs(args.pairs))
    write_clips(args.out, result)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as handle:
            json.dump(result.as_dict(), handle, indent=1)
    print(format_table(result))
    total = result.total()
    print(f"poise: {total.edited} of {total.clips} clip(s) edited -> {args.out}"
          + (f" (counts: {args.report})" if args.report else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
