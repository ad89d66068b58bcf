# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: how many of the top-k episodes ``robo-reward rank`` retrieves for an instruction are of that task.

Robometer's "proportion of task-relevant subtrajectories": every episode of a mixed set is ranked
against every distinct instruction of the set (one ``rank`` run with each as ``--instruction``),
and for each instruction the share of its top k whose own instruction is that one is counted;
printed for k = 3 and k = the task's number of episodes (R-precision), averaged over the
instructions, with what picking at random would give. An episode's own instruction is its first
stage's (a two-stage episode counts for its first task only).

    python bench/bench_rank_retrieval.py /tmp/mwsets/heldout-seeds --model tiny-random [--by final_progress]
"""
import argparse
import json
import os
import sys
import tempfile
from collections import Counter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="+", help="bag folders or LeRobot datasets (several tasks mixed)")
    parser.add_argument("--model", default="", help="as robo-reward rank's --model (default: the demo preset)")
    parser.add_argument("--by", default="final_progress")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    from robo_reward_ros.recordings.episode_sources import EpisodeReader, list_episodes
    from robo_reward_ros.replay.rank_run import run_rank
    reader = EpisodeReader()
    own = {(ref.source, ref.episode): reader.instruction(ref) for ref in list_episodes(args.data)}
    counts = Counter(own.values())
    instructions = list(dict.fromkeys(own.values()))
    with tempfile.TemporaryDirectory() as work:
        summary = run_rank(args.data, os.path.join(work, "ranked.csv"), args.by, instructions, model=args.model,
                           progress_bar=False, log=lambda _: None)
    per_instruction = {}
    for instruction in instructions:
        ranked = [r for r in summary["ranked"] if r["instruction"] == instruction]
        relevant = [own[(r["source"], r["episode"])] == instruction for r in ranked]
        r = counts[instruction]
        per_instruction[instruction] = {"episodes_of_task": r, f"top{args.k}": sum(relevant[:args.k]) / args.k,
                                        "r_precision": sum(relevant[:r]) / r}
    total = len(own)
    result = {"model": summary["model"], "by": args.by, "episodes": total, "instructions": len(instructions),
              f"mean_top{args.k}": sum(v[f"top{args.k}"] for v in per_instruction.values()) / len(instructions),
              "mean_r_precision": sum(v["r_precision"] for v in per_instruction.values()) / len(instructions),
              "chance": sum(counts[i] / total for i in instructions) / len(instructions),
              "per_instruction": per_instruction}
    for instruction, values in per_instruction.items():
        print(f"  {instruction!r:<50} {values['episodes_of_task']} episodes: top-{args.k} "
              f"{values[f'top{args.k}']:.2f}, R-precision {values['r_precision']:.2f}")
    print(f"{result['model']}: {total} episodes, {len(instructions)} instructions, by {args.by}: mean top-{args.k} "
          f"share {result[f'mean_top{args.k}']:.3f}, mean R-precision {result['mean_r_precision']:.3f} "
          f"(random picking: {result['chance']:.3f})")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
