#!/usr/bin/env bash
# Configures and builds mtune (all libraries, binaries, tests and benchmarks) in
# ./build with Ninja. Links the prebuilt shared LLVM/MLIR 22; never rebuilds LLVM.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${MTUNE_BUILD_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
