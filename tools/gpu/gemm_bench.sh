#!/usr/bin/env bash
# The GEMM benchmark of circular-buffer (run on the GPU machine, builds
# nothing; needs build-gpu/device from bundle.sh): on each shape, the
# hand-lowered ws_gemm.lowered.kir, ws_gemm.kir through the default pipeline
# (warp-specialized, as marked), the same with the producer's loops merged
# (circular-buffer{producer-loop=merged}) and through the pipeline with
# circular-buffer{mode=pipelined}, each with `kir-run --bench` against
# cuBLASLt in the same process, the four interleaved and the whole set run
# KIR_GEMM_ROUNDS times (default 2). JSON goes to $OUT/gemm/; then
# `python3 tools/gpu/gemm_table.py $OUT/gemm/*.json` prints the table.
# KIR_GEMM_SHAPES overrides the shapes (MxNxK, space-separated).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
device=$root/build-gpu/device
out=${OUT:-$root/build-gpu/out}
mkdir -p "$out/gemm"
export LD_LIBRARY_PATH=$device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export KIR_CACHE_DIR=$device/cache
kir_run=$device/tools/kir-run/kir-run

shapes=${KIR_GEMM_SHAPES:-"4096x4096x4096 2048x8192x8192 4096x11008x4096 8192x8192x8192"}
rest=uniform-predicates,insert-async-waits,plan-shared-memory,insert-syncs,insert-proxy-fences,dce
status=0
for round in $(seq 1 "${KIR_GEMM_ROUNDS:-2}"); do
  for shape in $shapes; do
    IFS=x read -r m n k <<<"$shape"
    directive="@ws_gemm M=$m N=$n K=$k a=normal(seed=1) b=normal(seed=2) c=fill(nan) => c ~= a @ b.T rtol=1e-3 atol=1e-2"
    # variant FILE PIPELINE NAME
    for variant in \
        "testdata/examples/ws_gemm.lowered.kir||hand" \
        "testdata/examples/ws_gemm.kir|default|warp-specialized" \
        "testdata/examples/ws_gemm.kir|canonicalize,circular-buffer{producer-loop=merged},$rest|merged-producer" \
        "testdata/examples/ws_gemm.kir|canonicalize,circular-buffer{mode=pipelined},$rest|pipelined"; do
      IFS='|' read -r file pipeline name <<<"$variant"
      "$kir_run" --bench --repeats="${KIR_GEMM_REPEATS:-7}" \
        --iterations="${KIR_GEMM_ITERATIONS:-20}" ${pipeline:+--pipeline="$pipeline"} \
        --directive="$directive" --json="$out/gemm/${shape}.${name}.${round}.json" \
        "$file" >>"$out/gemm.log" 2>&1 || status=1
    done
  done
done
exit $status
