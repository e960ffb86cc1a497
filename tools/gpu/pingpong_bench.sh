#!/usr/bin/env bash
# Ping-pong against the cooperative schedule (run on the GPU machine, builds
# nothing; needs build-gpu/device from bundle.sh): on each shape (default
# 4096x4096x4096; KIR_PINGPONG_SHAPES overrides, MxNxK space-separated),
# `kir-run --bench` against cuBLASLt in the same process of
#   cooperative  ws_gemm.kir through the default pipeline (two consumer
#                warpgroups share each 128x128 tile, 64 rows each),
#   pingpong     pingpong_gemm.kir through the default pipeline (two
#                consumer warpgroups take whole 128x128 tiles in turn),
#   one-group    pingpong_gemm.kir with circular-buffer{pingpong=false}
#                (the same input, one consumer warpgroup, no second to
#                overlap its epilogue),
# interleaved, the whole set run KIR_PINGPONG_ROUNDS times (default 2).
# kir-run's reports go to stdout and JSON to $OUT/pingpong/.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
device=$root/build-gpu/device
out=${OUT:-$root/build-gpu/out}
mkdir -p "$out/pingpong"
export LD_LIBRARY_PATH=$device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export KIR_CACHE_DIR=$device/cache
kir_run=$device/tools/kir-run/kir-run

shapes=${KIR_PINGPONG_SHAPES:-"4096x4096x4096"}
rest=uniform-predicates,insert-async-waits,plan-shared-memory,insert-syncs,insert-proxy-fences,dce
status=0
for round in $(seq 1 "${KIR_PINGPONG_ROUNDS:-2}"); do
  for shape in $shapes; do
    IFS=x read -r m n k <<<"$shape"
    # variant FILE KERNEL PIPELINE NAME
    for variant in \
        "testdata/examples/ws_gemm.kir|ws_gemm|default|cooperative" \
        "testdata/examples/pingpong_gemm.kir|pingpong_gemm|default|pingpong" \
        "testdata/examples/pingpong_gemm.kir|pingpong_gemm|canonicalize,circular-buffer{pingpong=false},$rest|one-group"; do
      IFS='|' read -r file kernel pipeline name <<<"$variant"
      directive="@$kernel M=$m N=$n K=$k a=normal(seed=1) b=normal(seed=2) c=fill(nan) => c ~= a @ b.T rtol=1e-3 atol=1e-2"
      echo "== $shape $name round $round"
      "$kir_run" --bench --repeats="${KIR_PINGPONG_REPEATS:-7}" \
        --iterations="${KIR_PINGPONG_ITERATIONS:-20}" --pipeline="$pipeline" \
        --directive="$directive" \
        --json="$out/pingpong/${shape}.${name}.${round}.json" "$file" ||
        status=1
    done
  done
done
exit $status
