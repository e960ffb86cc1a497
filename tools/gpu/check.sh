#!/usr/bin/env bash
# Runs on the GPU machine, in a copy of the repository with build-gpu/device
# (tools/gpu/bundle.sh) carried along; builds nothing. Runs the whole lit
# suite there (the GPU tests included: `cuda`, `cuobjdump` and
# `compute-sanitizer` are found), then `kir-run --bench --json` on every
# hand-lowered example and on the unlowered ones through the default
# pipeline, and prints a short table last. Logs and JSON go to $OUT
# (default: build-gpu/out). KIR_SKIP_LIT, KIR_SKIP_BENCH skip a part;
# KIR_LIT_FILTER selects lit tests by a regular expression,
# KIR_LIT_FILTER_OUT leaves some out, KIR_LIT_JOBS sets lit's workers
# (default 8).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
device=$root/build-gpu/device
out=${OUT:-$root/build-gpu/out}
mkdir -p "$out/bench"
export LD_LIBRARY_PATH=$device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export KIR_CACHE_DIR=$device/cache

# lit's site configuration, with this machine's paths.
mkdir -p "$device/testdata"
cat >"$device/testdata/lit.site.cfg.py" <<SITE
import os
config.kir_src_root = "$root"
config.kir_obj_root = "$device"
config.kir_tools_dir = "$device/tools"
config.llvm_tools_dir = "$device/llvm"
lit_config.load_config(config, os.path.join(config.kir_src_root, "testdata", "lit.cfg.py"))
SITE

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm \
  --format=csv,noheader >"$out/gpu.txt" 2>&1
start=$(date +%s)
lit_status=0
if [[ -z ${KIR_SKIP_LIT:-} ]]; then
  python3 "$device/lit/lit.py" -sv -j"${KIR_LIT_JOBS:-8}" "$device/testdata" \
    ${KIR_LIT_FILTER:+--filter "$KIR_LIT_FILTER"} \
    ${KIR_LIT_FILTER_OUT:+--filter-out "$KIR_LIT_FILTER_OUT"} \
    >"$out/lit.log" 2>&1
  lit_status=$?
fi
lit_seconds=$(($(date +%s) - start))

bench_status=0
if [[ -z ${KIR_SKIP_BENCH:-} ]]; then
  for example in testdata/examples/*.lowered.kir; do
    name=$(basename "$example" .lowered.kir)
    "$device/tools/kir-run/kir-run" --bench --json="$out/bench/$name.json" \
      "$example" >>"$out/bench.log" 2>&1 || bench_status=1
    # The same kernel lowered by the default pipeline instead of by hand.
    "$device/tools/kir-run/kir-run" --bench --pipeline=default \
      --json="$out/bench/$name.default.json" "testdata/examples/$name.kir" \
      >>"$out/bench.log" 2>&1 || bench_status=1
  done
fi

# One archive, so that every JSON file comes back whatever their number.
tar czf "$out/bench.tgz" -C "$out" bench

echo "== lit ($lit_seconds s, exit $lit_status) =="
grep -E '^(  (Passed|Failed|Unsupported|Unresolved|Timed Out)|FAIL:|UNRESOLVED:|-- Testing)' "$out/lit.log"
grep -E '^lit: .*note: (features|kir-run --probe)' "$out/lit.log" | sed 's/.*note: /  /'
echo "== bench (exit $bench_status) =="
if compgen -G "$out/bench/*.json" >/dev/null; then
  python3 tools/gpu/table.py "$out"/bench/*.json
  rm -rf "$out/bench"  # in bench.tgz
fi
[[ $lit_status -eq 0 && $bench_status -eq 0 ]]
