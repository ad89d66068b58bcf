"""What each precision costs: load time, memory and per-query time of a Robometer checkpoint.

Each (size, precision) runs in a fresh Python process, so the resident-memory figures belong to
that load alone (imports are done before the baseline is read). A query is a full uncached
Robometer forward on 8 frames (vision tower + language model + heads), the cost of the first step
of an episode. Also measured: loading a pre-quantized nf4 checkpoint against quantizing a bf16
one at load. Without --model, checkpoints are built offline with random weights: ``tiny``
(~10M parameters) and ``mid`` (~160M, Qwen3-VL architecture, Robometer layout).

    python bench/bench_precision.py --sizes tiny mid --json precision.json
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.join(HERE, "..", "robo_reward_ros")
DEFAULT_PRECISIONS = ("fp32", "bf16", "nf4", "int8")


def _status_kb(field):
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _param_count(module):
    """Logical parameters: a 4-bit tensor stores two per byte, its quant_state keeps the real shape."""
    total = 0
    for p in module.parameters():
        shape = getattr(getattr(p, "quant_state", None), "shape", None)
        total += math.prod(int(side) for side in shape) if shape is not None else p.numel()
    return total


def _tensor_bytes(module):
    """Bytes held by parameters and buffers (packed 4/8-bit storage counts as stored)."""
    seen, total = set(), 0
    for tensor in list(module.parameters()) + list(module.buffers()):
        if tensor.data_ptr() in seen:
            continue  # tied weights
        seen.add(tensor.data_ptr())
        total += tensor.numel() * tensor.element_size()
    return total


def worker(args):
    """One measurement in this process; prints one JSON line."""
    sys.path.insert(0, PACKAGE_ROOT)
    import numpy as np
    import torch
    import transformers  # noqa: F401  (imported before the baseline, like the backend modules)
    from robo_reward_ros.models import Frame, load_reward_model
    from robo_reward_ros.models.backends.robometer import RobometerBackend  # noqa: F401
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.precision in ("nf4", "int8"):
        import bitsandbytes  # noqa: F401
    rss0, anon0 = _status_kb("VmRSS"), _status_kb("RssAnon")
    start = time.perf_counter()
    if args.save_nf4:
        from robo_reward_ros.models.loading.quantized_checkpoint import save_quantized
        save_quantized(args.model, args.save_nf4, precision="nf4", device="cpu")
        print(json.dumps({"saved": args.save_nf4, "seconds": time.perf_counter() - start}))
        return 0
    model = load_reward_model(args.model, precision=args.precision, device="cpu")
    load_s = time.perf_counter() - start
    rss1, anon1 = _status_kb("VmRSS"), _status_kb("RssAnon")
    rng = np.random.default_rng(0)
    frames = [Frame(stamp=i / 3.0, rgb=rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)) for i in range(8)]
    times = []
    for _ in range(args.steps + 1):
        model.reset()  # empty vision cache: the full cost of a query
        t0 = time.perf_counter()
        out = model.score("put the green stick in the brown bowl", frames)
        times.append(time.perf_counter() - t0)
    # VmHWM, not getrusage: ru_maxrss survives exec, so it would report the parent's peak.
    rss2, peak = _status_kb("VmRSS"), _status_kb("VmHWM")
    row = {"model": args.label or args.model, "precision": args.precision, "load_s": load_s,
           "params_m": _param_count(model.model) / 1e6, "weight_mb": _tensor_bytes(model.model) / 2 ** 20,
           "rss_delta_mb": (rss1 - rss0) / 1024, "anon_delta_mb": (anon1 - anon0) / 1024,
           "rss_delta_after_steps_mb": (rss2 - rss0) / 1024, "peak_delta_mb": (peak - rss0) / 1024,
           "first_step_s": times[0], "step_s": statistics.median(times[1:]),
           "progress_last": float(out.progress[-1]), "threads": torch.get_num_threads()}
    print(json.dumps(row))
    return 0


def run_worker(extra, timeout):
    """Run the worker in a fresh interpreter; its last stdout line is the JSON result."""
    command = [sys.executable, os.path.abspath(__file__), "--worker"] + extra
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def format_table(rows, ratio_rows):
    head = (f"{'model':<6} {'precision':<9} {'params_M':>8} {'weights_MB':>10} {'load_s':>7} {'rss+load_MB':>11} "
            f"{'rss+steps_MB':>12} {'peak+_MB':>8} {'first_step_s':>12} {'step_s':>7} {'step/bf16':>9}")
    lines = [head, "-" * len(head)]
    bf16 = {r["model"]: r["step_s"] for r in rows if r["precision"] == "bf16"}
    for r in rows:
        rel = f"{r['step_s'] / bf16[r['model']]:.2f}" if r["model"] in bf16 else "-"
        lines.append(f"{r['model']:<6} {r['precision']:<9} {r['params_m']:>8.1f} {r['weight_mb']:>10.1f} "
                     f"{r['load_s']:>7.2f} {r['rss_delta_mb']:>11.1f} {r['rss_delta_after_steps_mb']:>12.1f} "
                     f"{r['peak_delta_mb']:>8.1f} "
                     f"{r['first_step_s']:>12.3f} {r['step_s']:>7.3f} {rel:>9}")
    lines.append("rss+load / rss+steps / peak+: resident memory above the process after imports (weights, "
                 "tokenizer, processor; then activations)")
    for r in ratio_rows:
        lines.append(f"{r['model']}: pre-quantized nf4 load {r['prequantized_load_s']:.2f} s vs quantize-at-load "
                     f"{r['quantize_at_load_s']:.2f} s: ratio {r['ratio']:.2f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help="Robometer checkpoint (default: build --sizes offline)")
    parser.add_argument("--label", help=argparse.SUPPRESS)
    parser.add_argument("--save-nf4", help=argparse.SUPPRESS)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--sizes", nargs="+", default=["tiny", "mid"])
    parser.add_argument("--precisions", nargs="+", default=list(DEFAULT_PRECISIONS))
    parser.add_argument("--steps", type=int, default=3, help="timed queries after one warm-up")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per worker")
    parser.add_argument("--workdir", help="keep built checkpoints here (default: a temporary folder)")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    sys.path.insert(0, PACKAGE_ROOT)
    common = ["--steps", str(args.steps), "--threads", str(args.threads)]
    rows, ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or tmp
        targets = [(os.path.basename(os.path.normpath(args.model)), args.model)] if args.model else []
        for size in [] if args.model else args.sizes:
            path = os.path.join(work, f"robometer_{size}")
            if not os.path.isfile(os.path.join(path, "config.json")):
                from robo_reward_ros.models.testing.tiny_checkpoints import build_robometer
                start = time.perf_counter()
                build_robometer(path, size=size)
                print(f"built {size} checkpoint in {time.perf_counter() - start:.1f} s: {path}", file=sys.stderr)
            targets.append((size, path))
        for label, path in targets:
            for precision in args.precisions:
                row = run_worker(["--model", path, "--label", label, "--precision", precision] + common, args.timeout)
                rows.append(row)
                print(f"{label} {precision}: load {row['load_s']:.2f} s, step {row['step_s']:.3f} s", file=sys.stderr)
            if "nf4" in args.precisions:
                saved = os.path.join(work, f"{label}_nf4")
                run_worker(["--model", path, "--save-nf4", saved] + common, args.timeout)
                pre = run_worker(["--model", saved, "--label", label, "--precision", "nf4"] + common, args.timeout)
                at_load = next(r for r in rows if r["model"] == label and r["precision"] == "nf4")
                pre["precision"] = "nf4-pre"
                rows.append(pre)
                ratios.append({"model": label, "prequantized_load_s": pre["load_s"],
                               "quantize_at_load_s": at_load["load_s"],
                               "ratio": pre["load_s"] / at_load["load_s"]})
    print(format_table(rows, ratios))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"rows": rows, "prequantized_nf4": ratios}, handle, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
