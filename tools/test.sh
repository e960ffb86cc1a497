#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test: ctest
# (unit tests, lit goldens), then, in a clang build with libFuzzer and
# AddressSanitizer, the fuzz_regressions ctest test (every input in
# tools/fuzz/regressions/ once) and the round-trip fuzzer for
# KIR_FUZZ_SECONDS (default 120) seeded with testdata/**/*.kir.
#
# Ends with "N passed, N failed" (each ctest test and each fuzz step counts
# once; a build that fails counts as one failure and skips what needs it) and
# exits non-zero if anything failed. A crashing fuzz input is kept under
# build-fuzz/crashes/; copy it into tools/fuzz/regressions/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$KIR_ROOT"

passed=0
failed=0

if ! kir_install "${KIR_BUILD_PACKAGES[@]}" "${KIR_TEST_PACKAGES[@]}"; then
  echo "0 passed, 1 failed"
  exit 1
fi

# --- ctest -------------------------------------------------------------------
run_ctest() {
  local log=$KIR_LOGS/ctest.log
  kir_note "ctest"
  ctest --test-dir build-ci --output-on-failure -j"$KIR_JOBS" 2>&1 |
    tee "$log" || true
  local summary
  summary=$(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$log" || true)
  if [[ $summary =~ ^([0-9]+)\ tests\ failed\ out\ of\ ([0-9]+)$ ]] &&
     ((BASH_REMATCH[2] > 0)); then
    failed=$((failed + BASH_REMATCH[1]))
    passed=$((passed + BASH_REMATCH[2] - BASH_REMATCH[1]))
  else
    printf 'error: ctest found no tests or did not finish\n' >&2
    failed=$((failed + 1))
  fi
}

if kir_build build-ci all -DCMAKE_BUILD_TYPE=Release; then
  run_ctest
else
  failed=$((failed + 1))
fi

# --- fuzzing -----------------------------------------------------------------
fuzzer=build-fuzz/tools/fuzz/kir_fuzz
regressions=tools/fuzz/regressions
crashes=build-fuzz/crashes

# report_crash LOG: shows the failure report and every saved input.
report_crash() {
  grep -E -A 30 '^==[0-9]+== ?ERROR|^kir_fuzz: |^ALARM|out-of-memory' "$1" |
    head -n 80 >&2 || kir_show_log_tail "$1"
  local input
  for input in "$crashes"/*; do
    [[ -f $input ]] || continue
    printf 'crashing input %s (%s bytes), as characters:\n' "$input" \
      "$(wc -c <"$input")" >&2
    od -An -c -w32 "$input" | head -n 40 >&2
    printf 'to keep it as a regression: cp %s %s/<what-it-exercises>.kir\n' \
      "$input" "$regressions" >&2
  done
}

run_fuzzer() {
  rm -rf "$crashes"  # inputs from an earlier run were reported then
  mkdir -p "$crashes"

  # The fuzz_regressions test runs the fuzzer once over each input there.
  kir_note "ctest -R fuzz_regressions in build-fuzz (replays $regressions)"
  local replay_log=$KIR_LOGS/fuzz-replay.log
  if ctest --test-dir build-fuzz -R '^fuzz_regressions$' --output-on-failure \
      >"$replay_log" 2>&1 &&
     grep -q '100% tests passed, 0 tests failed out of 1' "$replay_log"; then
    passed=$((passed + 1))
  else
    printf 'error: replaying the fuzz regressions failed (log: %s)\n' \
      "${replay_log#"$KIR_ROOT"/}" >&2
    report_crash "$replay_log"
    failed=$((failed + 1))
  fi

  local seconds=${KIR_FUZZ_SECONDS:-120} corpus=build-fuzz/corpus seeds=0
  local seed path
  rm -rf "$corpus"
  mkdir -p "$corpus"
  # Seed files share names across directories; flatten their paths instead.
  while IFS= read -r -d '' seed; do
    path=${seed#testdata/}
    cp "$seed" "$corpus/${path//\//__}"
    seeds=$((seeds + 1))
  done < <(find testdata -name '*.kir' -print0)

  local log=$KIR_LOGS/fuzz.log
  kir_note "fuzz: ${seconds}s from $seeds seeds (log: ${log#"$KIR_ROOT"/})"
  # New inputs go into the first directory; the regressions are read only.
  if "$fuzzer" -dict=build-fuzz/tools/fuzz/kir.dict \
      -artifact_prefix="$crashes/" -max_total_time="$seconds" -timeout=10 \
      -print_final_stats=1 \
      "$corpus" "$regressions" >"$log" 2>&1; then
    passed=$((passed + 1))
  else
    printf 'error: fuzzing failed (log: %s)\n' "${log#"$KIR_ROOT"/}" >&2
    report_crash "$log"
    failed=$((failed + 1))
  fi
  # The last status line has the coverage, the final stats the executions.
  grep -E '^#[0-9]+' "$log" | tail -n 1 || true
  grep -E '^(Done |stat::number_of_executed_units|stat::average_exec_per_sec)' \
    "$log" || true
}

if kir_build build-fuzz kir_fuzz -DKIR_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug; then
  run_fuzzer
else
  failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
((failed == 0))
