#!/bin/sh
# Side by side in one run: a tuned 256^3 matmul applied by the exported library
# (a) alone in its function and (b) sharing its function (outlined into a kernel).
# Usage: bench/outlined_vs_lone.sh [BUILD_DIR]   (needs mlir-opt-22 and mlir-runner-22)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
tools=/usr/lib/llvm-22
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/client/mtune" measure --problem matmul:m=256,n=256,k=256:f32 --min-time 0.2 \
  --no-calibrate --export "$work/best.db" | grep -E '^(candidate|speed)'
"$build/client/mtune" export --db "$work/best.db" --format mlir --out "$work/lib.mlir" --force
"$tools/bin/mlir-opt" "$here/outlined_vs_lone.mlir" \
  --transform-preload-library=transform-library-paths="$work/lib.mlir" --transform-interpreter \
  --one-shot-bufferize=bufferize-function-boundaries --buffer-deallocation-pipeline \
  --convert-linalg-to-loops --convert-vector-to-scf=full-unroll=true --expand-strided-metadata \
  --lower-affine --convert-scf-to-cf --convert-vector-to-llvm --finalize-memref-to-llvm \
  --convert-math-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm \
  --convert-ub-to-llvm --reconcile-unrealized-casts -o "$work/run.mlir"
# The host's features (mlir-runner otherwise compiles for generic x86-64).
mattr=$(grep -m1 -o -w 'avx512f\|avx2' /proc/cpuinfo | head -1 | sed 's/^/+/')
"$tools/bin/mlir-runner" "$work/run.mlir" -O3 ${mattr:+--mattr=$mattr,+fma} -e main \
  -entry-point-result=void \
  -shared-libs="$tools/lib/libmlir_c_runner_utils.so,$tools/lib/libmlir_runner_utils.so"
