#!/usr/bin/env bash
# SASS of one generated GEMM under the default pipeline and under variants
# (run on the GPU machine, builds nothing; needs build-gpu/device from
# bundle.sh and cuobjdump). Usage:
#
#   sass_compare.sh NAME "KIR-GEN OPTIONS" CHANGE...
#
# where each CHANGE is one pass with options (as in experiments.sh), e.g.
# 'uniform-predicates{mode=none}'. Writes $OUT/sass/NAME.<variant>.sass and
# prints, per variant, how often the instructions that show a lowering
# decision occur (TMA issue, elections, votes, convergence barriers, warp
# syncs, branches) and, for each TMA issue, the instructions just before
# it, so a reader sees whether it sits in a per-lane loop.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
device=$root/build-gpu/device
out=${OUT:-$root/build-gpu/out}/sass
mkdir -p "$out"
export LD_LIBRARY_PATH=$device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
name=$1
gen_options=$2
shift 2

# shellcheck source=tools/gpu/pipeline.sh
source "$root/tools/gpu/pipeline.sh"

# shellcheck disable=SC2086  # the kir-gen options are words
"$device/tools/kir-gen/kir-gen" matmul $gen_options -o "$out/$name.kir" ||
  exit 1
variants=(default)
labels=(default)
for change in "$@"; do
  variants+=("$(pipeline "$change")")
  labels+=("$change")
done
printf '%-40s' "instruction"
for label in "${labels[@]}"; do printf '%14s' "${label:0:13}"; done
echo
declare -a files
for i in "${!variants[@]}"; do
  file=$out/$name.$i.sass
  files+=("$file")
  "$device/tools/kir-run/kir-run" --pipeline="${variants[$i]}" --emit=sass \
    "$out/$name.kir" >"$file" 2>"$file.err" || echo "variant $i failed"
done
for pattern in UTMALDG UTMASTG UTMAREDG UBLKCP ELECT VOTE BSSY BSYNC \
    WARPSYNC 'BRA ' 'BAR.SYNC' 'BAR.ARV' SYNCS HGMMA STSM 'MEMBAR' 'FENCE'; do
  printf '%-40s' "$pattern"
  for file in "${files[@]}"; do
    printf '%14s' "$(grep -c -- "$pattern" "$file")"
  done
  echo
done
for i in "${!files[@]}"; do
  echo "== ${labels[$i]}: the 6 instructions before each TMA store or reduce"
  grep -B6 -E 'UTMASTG|UTMAREDG' "${files[$i]}" |
    sed -E 's@/\*[0-9a-f]+\*/@@; s/ +/ /g' | cut -c1-90
done
