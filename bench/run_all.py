# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""Run the benchmarks of issue 7 one after another; each prints its table and writes JSON.

    . scripts/env.sh
    python bench/run_all.py --out bench/results                 # everything (~25 min on 2 cores)
    python bench/run_all.py --out /tmp/r --quick                # short settings (~4 min), for a check
    python bench/run_all.py --out bench/results --only decode memory

Benchmarks (``--only`` names): ``real_arch`` (1: Qwen3-VL-4B architecture per-step cost, cached vs
full; ~9 GB RAM), ``node`` (2: installed reward_node under camera load), ``memory`` (3: a simulated
hour), ``precision`` (4: fp32/bf16/nf4/int8/int8wo/int4wo on tiny and ~160M checkpoints, and a
Jetson Orin projection), ``decode`` (5: camera message to model input). They run one at a time
(the heavy ones need the machine to themselves).
Writes ``OUT/<name>.json``, ``OUT/<name>.txt`` (the printed output) and ``OUT/summary.md``.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common as common  # noqa: E402

ORDER = ("decode", "memory", "precision", "node", "real_arch")
TITLES = {"real_arch": "1. Per-step cost, real Qwen3-VL-4B architecture (random weights)",
          "node": "2. Node under camera load", "memory": "3. Memory over a simulated hour",
          "precision": "4. Precision modes", "decode": "5. Decode/convert costs"}


def commands(args, out):
    py = sys.executable
    quick = args.quick
    return {
        "decode": [py, os.path.join(HERE, "bench_decode.py"), "--repeat", "10" if quick else "30",
                   "--json", os.path.join(out, "decode.json")],
        "memory": [py, os.path.join(HERE, "bench_memory.py"),
                   "--sim-seconds", "300" if quick else str(args.sim_seconds),
                   "--json", os.path.join(out, "memory.json")],
        "precision": [py, os.path.join(HERE, "bench_precision.py"),
                      "--sizes", *(["tiny"] if quick else args.precision_sizes),
                      "--json", os.path.join(out, "precision.json")],
        "node": [py, os.path.join(HERE, "bench_node.py"), "--seconds", "6" if quick else str(args.node_seconds),
                 *(["--sizes", "640x480", "--extra-slow", "0"] if quick else []),
                 "--json", os.path.join(out, "node.json")],
        "real_arch": [py, os.path.join(HERE, "bench_real_arch.py"), "--size", "tiny" if quick else args.real_arch_size,
                      "--precision", *args.real_arch_precision, "--steps", str(args.steps),
                      "--json", os.path.join(out, "real_arch.json")],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "results"), help="folder for JSON and text output")
    parser.add_argument("--only", nargs="+", choices=ORDER, help="run only these (default: all)")
    parser.add_argument("--skip", nargs="+", choices=ORDER, default=[], help="leave these out")
    parser.add_argument("--quick", action="store_true",
                        help="short settings: tiny model for real_arch, 5 simulated minutes, one camera size")
    parser.add_argument("--real-arch-size", default="4b", choices=("tiny", "mid", "4b"))
    parser.add_argument("--real-arch-precision", nargs="+", default=["bf16"])
    parser.add_argument("--steps", type=int, default=3, help="timed steps per path in real_arch")
    parser.add_argument("--sim-seconds", type=float, default=3600.0)
    parser.add_argument("--node-seconds", type=float, default=15.0)
    parser.add_argument("--precision-sizes", nargs="+", default=["tiny", "mid"])
    args = parser.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    selected = [name for name in ORDER if (not args.only or name in args.only) and name not in args.skip]
    table = commands(args, out)
    summary = [f"# Benchmark results\n\nCommand: `python bench/run_all.py {' '.join(argv or sys.argv[1:])}`\n",
               f"Machine: `{common.machine()}`\n"]
    failed = []
    for name in selected:
        print(f"\n=== {TITLES[name]} ===", flush=True)
        start = time.perf_counter()
        proc = subprocess.Popen(table[name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        for line in proc.stdout:
            print(line, end="", flush=True)
            lines.append(line)
        code = proc.wait()
        seconds = time.perf_counter() - start
        text = "".join(lines)
        with open(os.path.join(out, f"{name}.txt"), "w", encoding="utf-8") as handle:
            handle.write(text)
        shown = " ".join(os.path.relpath(a) if os.path.isabs(a) else a for a in table[name][1:])
        summary.append(f"## {TITLES[name]}\n\n`{shown}` ({seconds:.0f} s, exit {code})\n\n"
                       f"```text\n{text.rstrip()}\n```\n")
        if code != 0:
            failed.append(name)
    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(summary))
    print(f"\nwrote {out}/summary.md" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
