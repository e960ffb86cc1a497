#!/usr/bin/env bash
# The pass experiments on generated GEMMs (run on the GPU machine, builds
# nothing; needs build-gpu/device from bundle.sh): kir-bench --compare of the
# default pipeline against one changed option per variant, over
# testdata/bench/llm.csv (KIR_EXPERIMENT_CSV overrides), each problem's
# variants checked, then timed alternately in one process. Which set runs:
# $1 = a space-separated list of fences | lowering | reuse | splitk |
# schedules | splitk-reset | splitk-cluster | splitk-gather | splitk-skew |
# splitk-modes | splitk-tiles | llm-gather (default: all; schedules times
# testdata/bench/schedules.csv, cooperative against ping-pong and cluster
# configurations, as rows; splitk-reset times testdata/bench/splitk.csv
# with serial, tma-atomic reset=last and reset=parity, and tma-serial;
# splitk-cluster times testdata/bench/splitk_cluster.csv, mode=cluster
# against tma-atomic and serial on the same configurations; splitk-gather
# times testdata/bench/splitk.csv with serial, gather and tma-atomic;
# splitk-skew times testdata/bench/splitk_skew.csv, skewed splits, with
# serial, tma-serial and gather; splitk-modes times
# testdata/bench/splitk.csv with serial, tma-serial, tma-atomic and gather;
# splitk-tiles times testdata/bench/splitk_tiles.csv, other tiles and
# split counts, with the same four modes and twice the timed launches;
# splitk-tuned-MODE tunes the five target shapes of splitk.csv with
# --split-k-mode MODE and times the winners again; splitk-heuristic-MODE
# times the heuristic's configurations for MODE on them;
# llm-gather times llm.csv with the default pipeline and gather). A variant that fails on a problem (a layout that does not
# fit without reuse, a lowering that does not verify) makes that problem an
# error in its experiment, so variants likely to fail get an experiment of
# their own. JSON, CSV, SVG and logs go to $OUT/experiments/, also packed
# into $OUT/experiments.tgz.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
device=$root/build-gpu/device
out=${OUT:-$root/build-gpu/out}/experiments
mkdir -p "$out"
export LD_LIBRARY_PATH=$device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export KIR_CACHE_DIR=$device/cache
bench=$device/tools/kir-bench/kir-bench
csv=${KIR_EXPERIMENT_CSV:-testdata/bench/llm.csv}

# shellcheck source=tools/gpu/pipeline.sh
source "$root/tools/gpu/pipeline.sh"

# experiment NAME [kir-bench options...] -- VARIANT...
experiment() {
  local name=$1; shift
  local options=()
  while [[ $1 != -- ]]; do options+=("$1"); shift; done
  shift
  local variants=(default)
  for change in "$@"; do variants+=("$(pipeline "$change")"); done
  local start=$SECONDS
  # One variant (the default pipeline) is a plain run of the CSV's rows.
  if ((${#variants[@]} > 1)); then
    options+=(--compare "${variants[@]}")
  fi
  "$bench" "$csv" "${options[@]}" \
    --json "$out/$name.json" --csv "$out/$name.csv" --plot "$out/$name.svg" \
    --log "$out/$name.log" >"$out/$name.txt" 2>"$out/$name.err"
  echo "== $name: exit $?, $((SECONDS - start)) s"
  tail -n 8 "$out/$name.txt"
}

sets=${1:-fences lowering reuse splitk schedules splitk-reset splitk-cluster splitk-gather splitk-skew splitk-modes splitk-tiles llm-gather}
for set in $sets; do
  case $set in
    fences)
      experiment fences -- 'insert-proxy-fences{space=all}' \
        'insert-proxy-fences{placement=issuer}' 'insert-proxy-fences{hoist=false}' ;;
    lowering)
      experiment lowering -- 'uniform-predicates{mode=none}' \
        'circular-buffer{mode=pipelined}' ;;
    reuse)
      experiment reuse -- 'plan-shared-memory{reuse=never}' ;;
    splitk)
      experiment splitk \
        --filter '^(256x256x65536|512x1024x32768|128x1024x65536|1024x1024x16384|128x8192x8192|3648x480x8632) ' \
        -- 'serialize-split-k{mode=tma-serial}' 'serialize-split-k{mode=tma-atomic}' ;;
    schedules)
      csv=testdata/bench/schedules.csv experiment schedules -- ;;
    splitk-reset)
      csv=testdata/bench/splitk.csv experiment splitk_reset -- \
        'serialize-split-k{mode=tma-atomic,reset=last}' \
        'serialize-split-k{mode=tma-atomic,reset=parity}' \
        'serialize-split-k{mode=tma-serial}' ;;
    splitk-cluster)
      csv=testdata/bench/splitk_cluster.csv experiment splitk_cluster -- \
        'serialize-split-k{mode=tma-atomic}' 'serialize-split-k{mode=serial}' ;;
    splitk-gather)
      csv=testdata/bench/splitk.csv experiment splitk_gather -- \
        'serialize-split-k{mode=gather}' 'serialize-split-k{mode=tma-atomic}' ;;
    splitk-skew)
      csv=testdata/bench/splitk_skew.csv experiment splitk_skew -- \
        'serialize-split-k{mode=tma-serial}' 'serialize-split-k{mode=gather}' ;;
    splitk-modes)
      csv=testdata/bench/splitk.csv experiment splitk_modes -- \
        'serialize-split-k{mode=tma-serial}' \
        'serialize-split-k{mode=tma-atomic}' 'serialize-split-k{mode=gather}' ;;
    splitk-tuned-*)
      # kir-bench --tune for one split-K mode on the five target shapes
      # of testdata/bench/splitk.csv (the rows without a configuration),
      # then the winners timed again in a run of their own, so that the
      # table is not the best of 16 noisy measurements.
      mode=${set#splitk-tuned-}
      name=splitk_tuned_${mode//-/_}
      csv=testdata/bench/splitk.csv experiment "${name}_search" \
        --filter '^[0-9]+x[0-9]+x[0-9]+$' --split-k-mode "$mode" --tune \
        --tune-cache "$out/${name}_cache.txt" --
      csv=testdata/bench/splitk.csv experiment "$name" \
        --filter '^[0-9]+x[0-9]+x[0-9]+$' --tune-cache "$out/${name}_cache.txt" \
        --iterations 100 --repeats 7 -- ;;
    splitk-heuristic-*)
      # The heuristic's configurations for one split-K mode
      # (kir-bench --split-k-mode) on the five target shapes.
      mode=${set#splitk-heuristic-}
      csv=testdata/bench/splitk.csv experiment \
        "splitk_heuristic_${mode//-/_}" --filter '^[0-9]+x[0-9]+x[0-9]+$' \
        --split-k-mode "$mode" --iterations 100 --repeats 7 -- ;;
    splitk-tiles)
      csv=testdata/bench/splitk_tiles.csv experiment splitk_tiles \
        --iterations 100 --repeats 7 -- \
        'serialize-split-k{mode=tma-serial}' \
        'serialize-split-k{mode=tma-atomic}' 'serialize-split-k{mode=gather}' ;;
    llm-gather)
      experiment llm_gather -- 'serialize-split-k{mode=gather}' ;;
  esac
done
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
