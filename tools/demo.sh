#!/usr/bin/env bash
# Installs what is missing, builds kir-opt, and lowers the shipped example
# with the default pipeline, printing the lowered IR and pass statistics.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

kir_install "${KIR_BUILD_PACKAGES[@]}" || exit 1
kir_build build-ci kir-opt -DCMAKE_BUILD_TYPE=Release || exit 1

example=testdata/examples/epilogue.kir
kir_note "kir-opt $example --pipeline=default --stats"
cd "$KIR_ROOT"
build-ci/tools/kir-opt/kir-opt "$example" --pipeline=default --stats
kir_note "demo: $SECONDS s"
