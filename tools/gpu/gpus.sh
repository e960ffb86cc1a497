#!/usr/bin/env bash
# The evidence for kir-bench --gpus (issue 18), on a host with several GPUs
# (run there, builds nothing; needs build-gpu/device from bundle.sh). With
# the compile cache warmed first (so that neither timed run pays for
# NVRTC): the problem list on one GPU (--gpus=1), then on all of them
# (--gpus=all), each timed end to end; then a run on all GPUs during which
# one worker process is killed (SIGKILL) once a first problem has finished,
# and a --resume of that run's report. Reports, logs and summary.txt
# (tools/gpu/gpus_table.py) go to $OUT (default build-gpu/out/gpus).
# KIR_PROBLEMS overrides the list (default testdata/bench/llm.csv).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
device=$root/build-gpu/device
out=${OUT:-$root/build-gpu/out/gpus}
mkdir -p "$out"
export LD_LIBRARY_PATH=$device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
export KIR_CACHE_DIR=$device/cache
bench=${KIR_BENCH:-$device/tools/kir-bench/kir-bench}
problems=${KIR_PROBLEMS:-testdata/bench/llm.csv}
nvidia-smi -L >"$out/gpus.txt" 2>&1
gpus=$(grep -c '^GPU ' "$out/gpus.txt")
now() { date +%s.%N; }

# run NAME ARGS...: kir-bench on the list; its exit code and wall time go
# to NAME.rc and NAME.seconds.
run() {
  local name=$1
  shift
  local start end
  start=$(now)
  "$bench" "$problems" "$@" --json "$out/$name.json" --csv "$out/$name.csv" \
    >"$out/$name.txt" 2>"$out/$name.err"
  echo "$?" >"$out/$name.rc"
  end=$(now)
  awk "BEGIN { printf \"%.1f\\n\", $end - $start }" >"$out/$name.seconds"
}

run warm --gpus=all --warmup 0 --iterations 1 --repeats 1
run one --gpus=1
run all --gpus=all

# A worker killed in the middle of the run: once one problem has finished,
# kill the first worker (a child of kir-bench) that is running one.
"$bench" "$problems" --gpus=all --json "$out/killed.json" \
  >"$out/killed.txt" 2>"$out/killed.err" &
bench_pid=$!
killed=""
for _ in $(seq 1 6000); do
  if grep -q 'kir-bench: \[1/' "$out/killed.err" 2>/dev/null; then
    killed=$(pgrep -P "$bench_pid" | head -n 1)
    [[ -n $killed ]] && kill -KILL "$killed"
    break
  fi
  kill -0 "$bench_pid" 2>/dev/null || break
  sleep 0.1
done
wait "$bench_pid"
echo "$?" >"$out/killed.rc"
echo "${killed:-none}" >"$out/killed.worker"
run resumed --gpus=all --resume "$out/killed.json"

python3 tools/gpu/gpus_table.py "$out" "$gpus" | tee "$out/summary.txt"
