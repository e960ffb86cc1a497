#!/usr/bin/env bash
# Line coverage of each pass under the pass fuzzer: builds the pass fuzzer's
# replay driver with clang's source-based coverage in build-cov/, replays a
# corpus through it and prints llvm-cov's report for passes/*.cc (and, with
# --all, for every source the driver runs).
#
#   bash tools/fuzz/coverage.sh [--all] [CORPUS_DIR...]
#
# CORPUS_DIR defaults to build-san/corpus-kir_pass_fuzz, which the pass
# fuzzing step of tools/test.sh leaves behind (its seeds and what it
# found), plus tools/fuzz/pass_regressions. Not part of CI: it is a
# measurement, reported in README.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../setup.sh"
cd "$KIR_ROOT"

filter='passes/[a-z_]*\.cc$'
if [[ ${1:-} == --all ]]; then
  filter='(ir|parser|printer|passes)/[a-z_]*\.cc$'
  shift
fi
corpora=("$@")
((${#corpora[@]})) ||
  corpora=(build-san/corpus-kir_pass_fuzz tools/fuzz/pass_regressions)
for corpus in "${corpora[@]}"; do
  [[ -d $corpus ]] || kir_error "no corpus directory $corpus (run tools/test.sh first)" || exit 1
done

# Debian's clang and its llvm-profdata and llvm-cov come in one version.
version=$(clang++ --version | sed -nE 's/.*clang version ([0-9]+).*/\1/p')
profdata=$(command -v "llvm-profdata-$version" || command -v llvm-profdata || true)
cov=$(command -v "llvm-cov-$version" || command -v llvm-cov || true)
[[ -n $profdata && -n $cov ]] ||
  kir_error "needs llvm-profdata and llvm-cov for clang $version" || exit 1

kir_build build-cov kir_pass_fuzz_replay -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER=clang++ \
  "-DCMAKE_CXX_FLAGS=-O1 -fprofile-instr-generate -fcoverage-mapping" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fprofile-instr-generate" || exit 1

replay=build-cov/tools/fuzz/kir_pass_fuzz_replay
profiles=build-cov/profiles
rm -rf "$profiles"
mkdir -p "$profiles"
kir_note "replaying ${corpora[*]}"
LLVM_PROFILE_FILE="$profiles/%p.profraw" "$replay" "${corpora[@]}" \
  >"$KIR_LOGS/coverage-replay.log" 2>&1 ||
  { kir_show_log_tail "$KIR_LOGS/coverage-replay.log"; exit 1; }
tail -n 1 "$KIR_LOGS/coverage-replay.log"
"$profdata" merge -sparse "$profiles"/*.profraw -o "$profiles/merged.profdata"
# llvm-cov's columns: file, regions (3), functions (3), then lines,
# missed lines and line coverage.
"$cov" report "$replay" -instr-profile="$profiles/merged.profdata" |
  sed "s#$KIR_ROOT/##" |
  awk -v filter="$filter" '
    $1 ~ filter {
      printf "%-34s %6d lines %6d missed %7s\n", $1, $8, $9, $10
      lines += $8; missed += $9
    }
    END {
      if (lines > 0)
        printf "%-34s %6d lines %6d missed %6.2f%%\n", "together", lines,
               missed, 100 * (lines - missed) / lines
    }'
