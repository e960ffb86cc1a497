# Shared by tools/demo.sh and tools/test.sh (source it; it is not a command):
# installs the Debian 12 packages that are missing and builds a tree.
#
# Output is kept short: apt and build logs go to build-logs/, and only
# their tail is shown when something fails. KIR_JOBS sets the build
# parallelism (default 2).

KIR_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KIR_LOGS=$KIR_ROOT/build-logs
KIR_JOBS=${KIR_JOBS:-2}
mkdir -p "$KIR_LOGS"

# What building kir and running kir-opt needs (CMake configures the lit
# goldens too, which wants python3).
KIR_BUILD_PACKAGES=(cmake ninja-build g++ pkg-config libabsl-dev libre2-dev
                    libgtest-dev python3)
# What the tests add: lit and FileCheck, clang with libFuzzer.
KIR_TEST_PACKAGES=(llvm-19-tools clang libclang-rt-14-dev)

kir_note() { printf '==> %s\n' "$*"; }

kir_error() {
  printf 'error: %s\n' "$*" >&2
  return 1
}

# kir_show_log_tail LOG: the end of a log, for a step that failed.
kir_show_log_tail() {
  printf -- '--- last lines of %s ---\n' "$1" >&2
  tail -n 40 "$1" >&2
  printf -- '---\n' >&2
}

# kir_install PACKAGE...: apt-get installs those not installed yet; returns
# non-zero if it cannot.
kir_install() {
  local missing=() package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
        grep -q 'install ok installed'; then
      missing+=("$package")
    fi
  done
  ((${#missing[@]})) || return 0

  local sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null ||
      kir_error "missing ${missing[*]}; run as root or install sudo" || return
    sudo=(sudo)
  fi
  local log=$KIR_LOGS/apt.log
  kir_note "installing ${missing[*]} (log: ${log#"$KIR_ROOT"/})"
  if ! { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update &&
         "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y \
             --no-install-recommends "${missing[@]}"; } >>"$log" 2>&1; then
    kir_show_log_tail "$log"
    kir_error "apt-get failed"
    return
  fi
}

# kir_build DIR TARGET [CMAKE_ARG...]: configures DIR (a build directory under
# the repository) with Ninja and builds TARGET ("all" for everything).
# Returns non-zero, after showing the end of the log, if either step fails.
kir_build() {
  local dir=$KIR_ROOT/$1 target=$2
  shift 2
  local log=$KIR_LOGS/$(basename "$dir").log
  kir_note "building $target in ${dir#"$KIR_ROOT"/} (log: ${log#"$KIR_ROOT"/})"
  : >"$log"
  if ! cmake -S "$KIR_ROOT" -B "$dir" -G Ninja "$@" >>"$log" 2>&1; then
    kir_show_log_tail "$log"
    kir_error "cmake failed in ${dir#"$KIR_ROOT"/}"
    return
  fi
  if ! ninja -C "$dir" -j"$KIR_JOBS" "$target" >>"$log" 2>&1; then
    grep -E -A 12 '^FAILED: ' "$log" | head -n 60 >&2 || true
    kir_show_log_tail "$log"
    kir_error "building $target failed"
    return
  fi
}
