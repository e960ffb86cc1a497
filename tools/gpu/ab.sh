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

# The same kernel with its sub-tile loop kept rolled (`unroll = 1`), so
# that ptxas cannot unroll one variant and not the other.
rolled=$out/epilogue_rolled.kir
sed 's/for %st = %c0 to %c8 step %c1 {$/for %st = %c0 to %c8 step %c1 {unroll = 1} {/' \
  "$epilogue" >"$rolled"
grep -q 'step %c1 {unroll = 1} {$' "$rolled" || echo "ab: could not pin the loop"

# compare NAME P1 P2 [FILE]
compare() {
  local name=$1 p1=$2 p2=$3 file=${4:-$epilogue}
  # KIR_AB_ONLY: a regular expression of the experiments to run.
  [[ -n ${KIR_AB_ONLY:-} && ! $name =~ ^(${KIR_AB_ONLY})$ ]] && return
  "$kir_run" --compare-pipelines "$p1" "$p2" --repeats=${KIR_AB_REPEATS:-7} \
    --directive="$large" --json="$out/ab/$name.json" "$file" \
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
# The same comparisons with the sub-tile loop rolled in both variants.
compare space-rolled "$head,$fences,dce" "$head,$fences{space=all},dce" "$rolled"
compare placement-rolled "$head,$fences,dce" "$head,$fences{placement=issuer},dce" "$rolled"
compare hoist-rolled "$head,$fences,dce" "$head,$fences{hoist=false},dce" "$rolled"
compare uniform-predicates-rolled \
  "canonicalize,uniform-predicates{mode=none},insert-async-waits,insert-syncs,$fences{placement=issuer,hoist=true,predicate=true},dce" \
  "canonicalize,uniform-predicates{mode=shfl},insert-async-waits,insert-syncs,$fences{placement=issuer,hoist=true,predicate=true},dce" \
  "$rolled"
python3 tools/gpu/ab_table.py "$out"/ab/*.json
# One archive, so that every JSON file comes back whatever their number.
tar czf "$out/ab.tgz" -C "$out" ab
