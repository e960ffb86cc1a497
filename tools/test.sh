#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test:
#
#   1. build-ci/ (Release): ctest, the unit tests and the lit goldens;
#   2. build-san/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer,
#      libFuzzer instrumentation): the same ctest, with leak detection on
#      and any sanitizer report fatal, plus the replay of every fuzz
#      regression input;
#   3. the round-trip fuzzer for KIR_FUZZ_SECONDS (default 40), seeded with
#      testdata/**/*.kir, and the pass fuzzer for KIR_PASS_FUZZ_SECONDS
#      (default 60), seeded with every testdata case that verifies (split
#      at `// -----` and printed by kir-opt, so without comments), each with
#      its regressions; the pass fuzzer must bring at least 25% of its
#      executions to a pass.
#
# Ends with "N passed, N failed" (each ctest test and each fuzz step counts
# once; a build that fails counts as one failure and skips what needs it) and
# exits non-zero if anything failed. Each step prints how long it took. A
# failing fuzz input is kept under build-san/crashes/<fuzzer>/; copy it into
# the fuzzer's regressions directory (tools/fuzz/regressions/ or
# tools/fuzz/pass_regressions/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$KIR_ROOT"

passed=0
failed=0

if ! kir_install "${KIR_BUILD_PACKAGES[@]}" "${KIR_TEST_PACKAGES[@]}"; then
  echo "0 passed, 1 failed"
  exit 1
fi

# timed NAME COMMAND...: runs COMMAND, then prints how long it took.
timed() {
  local name=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  kir_note "$name: $((SECONDS - start)) s"
  return "$status"
}

# --- ctest -------------------------------------------------------------------
# run_ctest DIR LOG: runs every ctest test of DIR and counts the results.
run_ctest() {
  local dir=$1 log=$2
  kir_note "ctest in $dir"
  ctest --test-dir "$dir" --output-on-failure -j"$KIR_JOBS" 2>&1 |
    tee "$log" || true
  local summary
  summary=$(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$log" || true)
  if [[ $summary =~ ^([0-9]+)\ tests\ failed\ out\ of\ ([0-9]+)$ ]] &&
     ((BASH_REMATCH[2] > 0)); then
    failed=$((failed + BASH_REMATCH[1]))
    passed=$((passed + BASH_REMATCH[2] - BASH_REMATCH[1]))
  else
    printf 'error: ctest found no tests or did not finish in %s\n' "$dir" >&2
    failed=$((failed + 1))
  fi
}

if timed "build (Release)" kir_build build-ci all -DCMAKE_BUILD_TYPE=Release
then
  timed "ctest (Release)" run_ctest build-ci "$KIR_LOGS/ctest.log"
else
  failed=$((failed + 1))
fi

# --- sanitizers ----------------------------------------------------------------
# Reports abort (a signal), so that `not` in a lit test cannot mistake one
# for the expected failure; leaks are reported at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}
crashes=build-san/crashes

san_built=0
if timed "build (ASan+UBSan)" kir_build build-san all -DKIR_FUZZ=ON \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug; then
  san_built=1
  rm -rf "$crashes"  # inputs from an earlier run were reported then
  mkdir -p "$crashes"
  # The differential fuzzer runs 30 s in the Release ctest; here a shorter
  # run keeps the sanitizers on its interpreter and passes within CI's time.
  KIR_CHECK_FUZZ_SECONDS=${KIR_CHECK_FUZZ_SECONDS:-15} \
    timed "ctest (ASan+UBSan)" run_ctest build-san "$KIR_LOGS/ctest-san.log"
else
  failed=$((failed + 1))
fi

# --- fuzzing -------------------------------------------------------------------
# report_crash LOG REGRESSIONS ARTIFACTS: shows the failure report and every
# saved input.
report_crash() {
  grep -E -A 30 '^==[0-9]+== ?ERROR|^kir_(pass_)?fuzz: |runtime error|^ALARM|out-of-memory|internal error' "$1" |
    head -n 80 >&2 || kir_show_log_tail "$1"
  local input
  for input in "$3"/*; do
    [[ -f $input ]] || continue
    printf 'failing input %s (%s bytes), as characters:\n' "$input" \
      "$(wc -c <"$input")" >&2
    od -An -c -w32 "$input" | head -n 40 >&2
    printf 'to keep it as a regression: cp %s %s/<what-it-exercises>.kir\n' \
      "$input" "$2" >&2
  done
}

# seed_corpus DIR HOW: fills DIR with every testdata/**/*.kir, as it is
# (HOW=raw) or split at `// -----` into the cases that parse and verify, as
# kir-opt prints them (HOW=verified). Seed files share names across
# directories; their paths are flattened instead.
seed_corpus() {
  local corpus=$1 how=$2 seed path
  rm -rf "$corpus"
  mkdir -p "$corpus"
  while IFS= read -r -d '' seed; do
    path=${seed#testdata/}
    path=${path//\//__}
    if [[ $how == raw ]]; then
      cp "$seed" "$corpus/$path"
    else
      { build-ci/tools/kir-opt/kir-opt --split-input-file "$seed" 2>/dev/null ||
          true; } |
        awk -v out="$corpus/$path" \
          '/^\/\/ -----$/ { n++; next } { print > (out "." n + 0) }'
    fi
  done < <(find testdata -name '*.kir' -print0)
}

# fuzz NAME SECONDS REGRESSIONS SEEDS [FLAG...]: runs build-san/tools/fuzz/NAME
# for SECONDS, seeded with testdata (SEEDS: raw or verified, see
# seed_corpus) and REGRESSIONS; prints its report and returns its status.
# New inputs go into the first directory; the regressions are read only.
fuzz() {
  local name=$1 seconds=$2 regressions=$3 how=$4
  shift 4
  local corpus=build-san/corpus-$name artifacts=$crashes/$name
  local log=$KIR_LOGS/$name.log status=0
  mkdir -p "$artifacts"
  seed_corpus "$corpus" "$how"
  kir_note "$name: ${seconds}s from $(find "$corpus" -type f | wc -l) seeds and $regressions (log: ${log#"$KIR_ROOT"/})"
  "build-san/tools/fuzz/$name" -dict=build-san/tools/fuzz/kir.dict \
    -artifact_prefix="$artifacts/" -max_total_time="$seconds" \
    -print_final_stats=1 "$@" "$corpus" "$regressions" >"$log" 2>&1 ||
    status=$?
  if ((status != 0)); then
    printf 'error: %s found a failing input (log: %s)\n' "$name" \
      "${log#"$KIR_ROOT"/}" >&2
    report_crash "$log" "$regressions" "$artifacts"
  fi
  # The last status line has the coverage, the final stats the executions.
  grep -E '^#[0-9]+' "$log" | tail -n 1 || true
  grep -E '^(Done |stat::number_of_executed_units|stat::average_exec_per_sec)' \
    "$log" || true
  return "$status"
}

# The pass fuzzer tests the passes only with inputs that verify.
check_pass_reach() {
  local line percent
  line=$(grep -E '^kir_pass_fuzz: .* reached a pass' "$KIR_LOGS/kir_pass_fuzz.log" |
         tail -n 1 || true)
  printf '%s\n' "${line:-kir_pass_fuzz: no executions counted}"
  percent=$(sed -E 's/.*\(([0-9]+)\.[0-9]%\).*/\1/' <<<"$line")
  if [[ $percent =~ ^[0-9]+$ ]] && ((percent >= 25)); then
    passed=$((passed + 1))
  else
    printf 'error: under 25%% of the pass fuzzer executions reached a pass\n' >&2
    failed=$((failed + 1))
  fi
}

# count_fuzz STATUS_FILE: counts one fuzz step from the status it left.
count_fuzz() {
  if [[ $(cat "$1" 2>/dev/null) == 0 ]]; then
    passed=$((passed + 1))
    return 0
  fi
  failed=$((failed + 1))
  return 1
}

if ((san_built)); then
  # The two fuzzers run at the same time, one core each (libFuzzer uses
  # one), and report in turn.
  fuzz_start=$SECONDS
  ( status=0
    fuzz kir_fuzz "${KIR_FUZZ_SECONDS:-40}" tools/fuzz/regressions raw \
      -timeout=10 >"$KIR_LOGS/kir_fuzz.report" 2>&1 || status=$?
    echo "$status" >"$KIR_LOGS/kir_fuzz.status" ) &
  # Every input that verifies runs through seven pipelines, about fifteen
  # times slower under the sanitizers than in a Release build: inputs are
  # kept to 4 KiB (the larger examples are left to the goldens) and an
  # input may take 30 s before it counts as a hang.
  seeds=verified
  [[ -x build-ci/tools/kir-opt/kir-opt ]] || seeds=raw
  ( status=0
    fuzz kir_pass_fuzz "${KIR_PASS_FUZZ_SECONDS:-60}" \
      tools/fuzz/pass_regressions "$seeds" -timeout=30 -max_len=4096 \
      >"$KIR_LOGS/kir_pass_fuzz.report" 2>&1 || status=$?
    echo "$status" >"$KIR_LOGS/kir_pass_fuzz.status" ) &
  wait
  cat "$KIR_LOGS/kir_fuzz.report"
  count_fuzz "$KIR_LOGS/kir_fuzz.status" || true
  cat "$KIR_LOGS/kir_pass_fuzz.report"
  # A run cut short by a finding has no count (and has failed already).
  if count_fuzz "$KIR_LOGS/kir_pass_fuzz.status"; then
    check_pass_reach
  fi
  kir_note "fuzzing: $((SECONDS - fuzz_start)) s"
fi

echo "$passed passed, $failed failed"
((failed == 0))
