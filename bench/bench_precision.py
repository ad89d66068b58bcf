# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
"""What each precision costs: load time, memory, per-query time and output drift of a Robometer checkpoint.

Each (size, precision) runs in a fresh Python process, so the resident-memory figures belong to
that load alone (imports are done before the baseline is read). A query is a full uncached
Robometer forward on 8 frames (vision tower + language model + heads), the cost of the first step
of an episode. Precisions: fp32, bf16, bitsandbytes nf4/int8, torchao int8wo/int4wo (weight-only,
bf16 activations). Also measured: loading pre-quantized nf4 and int8wo checkpoints against
quantizing at load; the largest progress/success difference from fp32 on the same frames; the
bytes a step moves (step_traffic.py), and from them a Jetson Orin projection for the 4B model
(a projection, not a measurement). Without --model, checkpoints are built offline with random
weights: ``tiny`` (~10M parameters) and ``mid`` (~160M, Qwen3-VL architecture, Robometer layout).

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
sys.path.insert(0, HERE)  # step_traffic
PACKAGE_ROOT = os.path.join(HERE, "..", "robo_reward_ros")
DEFAULT_PRECISIONS = ("fp32", "bf16", "nf4", "int8", "int8wo", "int4wo")
PREQUANTIZED = ("nf4", "int8wo")  # int4wo has no safetensors layout on the CPU (torchao 0.18)
# Jetson Orin memory bandwidth (datasheets) and GPU dense FP16 tensor throughput, taken as a
# quarter of the GPU's sparse INT8 TOPS (AGX Orin 64GB: 170; Orin Nano 8GB: 40, Super 67).
JETSONS = (("AGX Orin 64GB", 204.8e9, 42.5e12), ("Orin Nano 8GB Super", 102e9, 16.75e12),
           ("Orin Nano 8GB", 68e9, 10e12))


def _status_kb(field):
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _param_count(module):
    """Logical parameters: a 4-bit tensor stores two per byte, its quant_state keeps the real shape.

    A torchao tensor reports its logical shape itself.
    """
    total = 0
    for p in module.parameters():
        shape = getattr(getattr(p, "quant_state", None), "shape", None)
        total += math.prod(int(side) for side in shape) if shape is not None else p.numel()
    return total


def _tensor_bytes(module):
    """Bytes held by parameters and buffers (packed 4/8-bit storage and its scales count as stored)."""
    from step_traffic import tensor_storage_bytes
    seen, total = set(), 0
    for tensor in list(module.parameters()) + list(module.buffers()):
        key = id(tensor) if type(tensor).__module__.startswith("torchao") else tensor.data_ptr()
        if key in seen:
            continue  # tied weights
        seen.add(key)
        total += tensor_storage_bytes(tensor)
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
    if args.precision in ("int8wo", "int4wo"):
        import torchao  # noqa: F401
    rss0, anon0 = _status_kb("VmRSS"), _status_kb("RssAnon")
    start = time.perf_counter()
    if args.save_to:
        from robo_reward_ros.models.loading.quantized_checkpoint import save_quantized
        save_quantized(args.model, args.save_to, precision=args.precision, device="cpu")
        print(json.dumps({"saved": args.save_to, "seconds": time.perf_counter() - start}))
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
    from step_traffic import formula_weight_bytes, measure
    instruction = "put the green stick in the brown bowl"
    traffic = measure(model.model, lambda: (model.reset(), model.score(instruction, frames)))
    # The next step of a stream (the node's window keeps the stage's first frame, one new frame):
    # what the cached path still computes.
    newest = Frame(stamp=8 / 3.0, rgb=rng.integers(0, 256, (224, 224, 3), dtype=np.uint8))
    next_window = frames[:1] + frames[2:] + [newest]
    traffic_by_step = {}
    for kind, prefix in (("vision_cached", False), ("cached", True)):  # vision_cached: before issue 19
        model.prefix_cache.enabled = prefix
        model.reset()
        model.score(instruction, frames)
        traffic_by_step[kind] = measure(model.model, lambda: model.score(instruction, next_window))
        traffic_by_step[kind].pop("shapes")
    model.prefix_cache.enabled = True
    # The final hidden state at the progress tokens (what the heads read): a drift measure that does
    # not depend on how sharply a head's random weights turn it into a probability.
    from robo_reward_ros.models.backends.robometer_special_tokens import PROG_TOKEN
    sequence = model.progress_sequence(instruction, model.select(frames))
    positions = np.nonzero(sequence.input_ids == model.token_ids[PROG_TOKEN])[0]
    head_rows = model.last_hidden_states([sequence], use_cache=False)[0, torch.from_numpy(positions)].float()
    traffic["formula_weight_bytes"] = formula_weight_bytes(traffic.pop("shapes"), args.precision)
    row = {"model": args.label or args.model, "precision": args.precision, "load_s": load_s,
           "params_m": _param_count(model.model) / 1e6, "weight_mb": _tensor_bytes(model.model) / 2 ** 20,
           "rss_delta_mb": (rss1 - rss0) / 1024, "anon_delta_mb": (anon1 - anon0) / 1024,
           "rss_delta_after_steps_mb": (rss2 - rss0) / 1024, "peak_delta_mb": (peak - rss0) / 1024,
           "first_step_s": times[0], "step_s": statistics.median(times[1:]),
           "progress_last": float(out.progress[-1]), "progress": out.progress.tolist(),
           "success": out.success.tolist(), "head_rows": head_rows.cpu().numpy().round(5).tolist(),
           "traffic": traffic, "traffic_cached_step": traffic_by_step["cached"],
           "traffic_vision_cached_step": traffic_by_step["vision_cached"], "threads": torch.get_num_threads()}
    print(json.dumps(row))
    return 0


def run_worker(extra, timeout):
    """Run the worker in a fresh interpreter; its last stdout line is the JSON result."""
    command = [sys.executable, os.path.abspath(__file__), "--worker"] + extra
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def add_drift(rows):
    """Largest |progress| and |success| difference from the fp32 row of the same model (same frames).

    Also the relative L2 difference of the final hidden state at the progress tokens.
    """
    import numpy as np
    fp32 = {r["model"]: r for r in rows if r["precision"] == "fp32"}
    for r in rows:
        ref = fp32.get(r["model"])
        if ref is None:
            r["max_dprogress"] = r["max_dsuccess"] = r["hidden_rel_err"] = None
            continue
        r["max_dprogress"] = max(abs(a - b) for a, b in zip(r["progress"], ref["progress"]))
        r["max_dsuccess"] = max(abs(a - b) for a, b in zip(r["success"], ref["success"]))
        got, want = np.asarray(r["head_rows"]), np.asarray(ref["head_rows"])
        r["hidden_rel_err"] = float(np.linalg.norm(got - want) / np.linalg.norm(want))


def _cell(value, spec):
    return "-" if value is None else format(value, spec)


def format_table(rows, ratio_rows):
    head = (f"{'model':<6} {'precision':<10} {'params_M':>8} {'weights_MB':>10} {'load_s':>7} {'rss+load_MB':>11} "
            f"{'rss+steps_MB':>12} {'peak+_MB':>8} {'first_step_s':>12} {'step_s':>7} {'step/bf16':>9} "
            f"{'max|dprog|':>10} {'max|dsucc|':>10} {'hidden_err':>10} {'step_MB_moved':>13}")
    lines = [head, "-" * len(head)]
    bf16 = {r["model"]: r["step_s"] for r in rows if r["precision"] == "bf16"}
    for r in rows:
        rel = f"{r['step_s'] / bf16[r['model']]:.2f}" if r["model"] in bf16 else "-"
        moved = (r["traffic"]["weight_bytes"] + r["traffic"]["activation_bytes"]) / 2 ** 20
        lines.append(f"{r['model']:<6} {r['precision']:<10} {r['params_m']:>8.1f} {r['weight_mb']:>10.1f} "
                     f"{r['load_s']:>7.2f} {r['rss_delta_mb']:>11.1f} {r['rss_delta_after_steps_mb']:>12.1f} "
                     f"{r['peak_delta_mb']:>8.1f} "
                     f"{r['first_step_s']:>12.3f} {r['step_s']:>7.3f} {rel:>9} "
                     f"{_cell(r.get('max_dprogress'), '.4f'):>10} {_cell(r.get('max_dsuccess'), '.4f'):>10} "
                     f"{_cell(r.get('hidden_rel_err'), '.4f'):>10} {moved:>13.1f}")
    lines.append("rss+load / rss+steps / peak+: resident memory above the process after imports (weights, "
                 "tokenizer, processor; then activations). max|d...|: against fp32 on the same 8 frames; hidden_err: "
                 "relative L2 difference from fp32 of the final hidden state at the progress tokens. "
                 "step_MB_moved: Linear weights read + activations in/out in one step (step_traffic.py)")
    for r in rows:
        measured, formula = r["traffic"]["weight_bytes"], r["traffic"]["formula_weight_bytes"]
        if abs(measured - formula) > 1e-3 * formula:
            lines.append(f"{r['model']} {r['precision']}: stored Linear weights measured {measured / 2 ** 20:.2f} MB, "
                         f"step_traffic's formula {formula / 2 ** 20:.2f} MB")
    for r in ratio_rows:
        lines.append(f"{r['model']}: pre-quantized {r['precision']} load {r['prequantized_load_s']:.2f} s vs "
                     f"quantize-at-load {r['quantize_at_load_s']:.2f} s: ratio {r['ratio']:.2f}")
    return "\n".join(lines)


STEP_KINDS = (("full", "traffic"), ("vision", "traffic_vision_cached_step"), ("cached", "traffic_cached_step"))


def jetson_projection(rows, size="4b"):
    """Bytes and FLOPs of a ``size`` Robometer step per precision and step kind, from the largest measured model's rows.

    "full": the first step of a stage (nothing cached); "vision": a later one with only the vision
    features cached (one new frame's vision work, the whole language model); "cached": also the
    instruction's and the first frame's KV cache (the language model from the first progress token on).
    """
    from step_traffic import carry_to
    measured = [r for r in rows if r["precision"] == "bf16"]
    if not measured:
        return None, []
    source = max(measured, key=lambda r: r["params_m"])
    out = []
    for precision in dict.fromkeys(r["precision"].replace("-pre", "") for r in rows):
        for kind, field in STEP_KINDS:
            if field not in source:
                continue
            traffic = carry_to(size, source[field]["rows_per_module"], precision)
            bounds = {name: max(traffic["bytes"] / bandwidth, traffic["flops"] / flops)
                      for name, bandwidth, flops in JETSONS}
            memory = {name: traffic["bytes"] / bandwidth for name, bandwidth, _ in JETSONS}
            out.append({"precision": precision, "step": kind, **traffic, "memory_bound_s": memory,
                        "projected_s": bounds})
    return source["model"], out


def format_projection(source, projection, size="4b"):
    names = [name for name, _, _ in JETSONS]
    head = (f"{'precision':<10} {'step':<7} {'weights_GB':>10} {'acts_GB':>8} {'GB/step':>8} {'TFLOP':>6} "
            + " ".join(f"{n + ' ms':>24}" for n in names))
    lines = [f"PROJECTION (not measured): Robometer {size} step (8 frames, 224 px) on Jetson Orin, from the bytes "
             f"and rows measured on '{source}' carried to the {size} shapes; ms = max(bytes / bandwidth, "
             "FLOPs / dense FP16 peak), memory-bound part in brackets", head, "-" * len(head)]
    for p in projection:
        cells = " ".join(f"{p['projected_s'][n] * 1e3:>10.0f} ({p['memory_bound_s'][n] * 1e3:>5.0f} mem)"
                         .rjust(24) for n in names)
        lines.append(f"{p['precision']:<10} {p.get('step', 'full'):<7} {p['weight_bytes'] / 1e9:>10.2f} "
                     f"{p['activation_bytes'] / 1e9:>8.2f} {p['bytes'] / 1e9:>8.2f} {p['flops'] / 1e12:>6.2f} {cells}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help="Robometer checkpoint (default: build --sizes offline)")
    parser.add_argument("--label", help=argparse.SUPPRESS)
    parser.add_argument("--save-to", help=argparse.SUPPRESS)
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
            for precision in [p for p in PREQUANTIZED if p in args.precisions]:
                saved = os.path.join(work, f"{label}_{precision}")
                run_worker(["--model", path, "--precision", precision, "--save-to", saved] + common, args.timeout)
                pre = run_worker(["--model", saved, "--label", label, "--precision", precision] + common, args.timeout)
                at_load = next(r for r in rows if r["model"] == label and r["precision"] == precision)
                pre["precision"] = f"{precision}-pre"
                rows.append(pre)
                ratios.append({"model": label, "precision": precision, "prequantized_load_s": pre["load_s"],
                               "quantize_at_load_s": at_load["load_s"],
                               "ratio": pre["load_s"] / at_load["load_s"]})
    add_drift(rows)
    print(format_table(rows, ratios))
    source, projection = jetson_projection(rows)
    if projection:
        print()
        print(format_projection(source, projection))
    if args.json:
        for r in rows:
            r.pop("head_rows")  # only for hidden_rel_err: 8 x hidden floats per row
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"rows": rows, "prequantized": ratios, "jetson_projection_4b": projection,
                       "jetson_projection_source": source,
                       "jetsons": [{"name": n, "bandwidth_bytes_s": b, "dense_fp16_flops": f}
                                   for n, b, f in JETSONS]}, handle, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
