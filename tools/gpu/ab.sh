#!/usr/bin/env bash
# A/B experiments on the GPU machine (builds nothing; needs build-gpu/device
# from bundle.sh): each line below runs two pipelines on the same inputs
# with `kir-run --compare-pipelines` and writes its JSON to $OUT/ab/. Then
# `python3 tools/gpu/ab_table.py $OUT/ab/*.json` prints the table.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
device=$root/build-gpu/device
out=${OUT:-$root/build-gpu/out}
mkdir -p "$out/ab"
export LD_LIBRARY_PATH=$device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export KIR_CACHE_DIR=$device/cache
kir_run=$device/tools/kir-run/kir-run

# The epilogue at a size where it dominates: 8192 x 8192 (256 MiB of f32
# accumulators in, 128 MiB of bf16 out).
epilogue=testdata/examples/epilogue.kir
large='@epilogue M=8192 N=8192 acc=normal(seed=1) alpha=0.5 out=fill(nan) => out ~= bf16(alpha * acc) rtol=1e-2 atol=1e-3'
head='canonicalize,uniform-predicates,insert-async-waits,insert-syncs'
fences='insert-proxy-fences'

# compare NAME P1 P2
compare() {
  local name=$1 p1=$2 p2=$3
  "$kir_run" --compare-pipelines "$p1" "$p2" --repeats=${KIR_AB_REPEATS:-7} \
    --directive="$large" --json="$out/ab/$name.json" "$epilogue" \
    >>"$out/ab.log" 2>&1 || echo "ab: $name failed (see ab.log)"
}

# insert-proxy-fences options, each against the default.
compare space "$head,$fences,dce" "$head,$fences{space=all},dce"
compare placement "$head,$fences,dce" "$head,$fences{placement=issuer},dce"
compare hoist "$head,$fences,dce" "$head,$fences{hoist=false},dce"
compare issuer-predicate "$head,$fences{placement=issuer,predicate=false},dce" \
  "$head,$fences{placement=issuer,predicate=true},dce"
# The nvFuser experiment (uniform-predicates): fence in issuer placement,
# hoisted and predicated; the author's predicates against the shfl form.
compare uniform-predicates \
  "canonicalize,uniform-predicates{mode=none},insert-async-waits,insert-syncs,$fences{placement=issuer,hoist=true,predicate=true},dce" \
  "canonicalize,uniform-predicates{mode=shfl},insert-async-waits,insert-syncs,$fences{placement=issuer,hoist=true,predicate=true},dce"
python3 tools/gpu/ab_table.py "$out"/ab/*.json
