#!/usr/bin/env bash
# Builds what the GPU machine needs into build-gpu/device (an ignored
# folder): kir-run, kir-opt, kir-check, kir-gen and kir-bench linked with
# Abseil, re2 and the C++ runtime statically (-DKIR_STATIC=ON), FileCheck,
# `not` and the libz3 FileCheck loads, and lit. Run it here, then run
# tools/gpu/check.sh there with build-gpu/device carried along.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DKIR_STATIC=ON \
  >/dev/null
ninja -C build-gpu kir-run kir-opt kir-check kir-gen kir-bench
device=build-gpu/device
rm -rf "$device"
mkdir -p "$device/tools/kir-run" "$device/tools/kir-opt" \
  "$device/tools/kir-check" "$device/tools/kir-gen" \
  "$device/tools/kir-bench" "$device/llvm" "$device/lib"
cp build-gpu/tools/kir-run/kir-run "$device/tools/kir-run/"
cp build-gpu/tools/kir-opt/kir-opt "$device/tools/kir-opt/"
cp build-gpu/tools/kir-check/kir-check "$device/tools/kir-check/"
cp build-gpu/tools/kir-gen/kir-gen "$device/tools/kir-gen/"
cp build-gpu/tools/kir-bench/kir-bench "$device/tools/kir-bench/"
cp "$(readlink -f /usr/lib/llvm-19/bin/FileCheck)" "$device/llvm/FileCheck"
cp "$(readlink -f /usr/lib/llvm-19/bin/not)" "$device/llvm/not"
cp "$(ldd /usr/lib/llvm-19/bin/FileCheck | awk '/libz3/ {print $3}')" \
  "$device/lib/"
cp -r /usr/lib/llvm-19/build/utils/lit "$device/lit"
find "$device/lit" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$device"
