// The `mtune-split-pair-transposes` pass: splits a linalg.transpose that moves
// pairs of elements across a matrix (permutation [2, 0, 1] of a [p][2][m] tensor
// into [m][p][2]; the copy that packs a k-major operand such as matmul_transpose_a's
// A [k][m] into the row-major pairs [m][k/2][2] AMX tiles load) into two transposes
// that vector code does well: an interleave of two rows ([0, 2, 1]: [p][2][m] ->
// [p][m][2], what packing B [k][n] into the VNNI layout does) and a transpose of
// whole pairs ([1, 0, 2]: [p][m][2] -> [m][p][2], 32-bit elements). Done in one,
// the transpose of 16-bit elements lowered to shuffles LLVM made slow (a 512^3
// matmul_transpose_a spent 240 us, about 2 GB/s, on that copy). Templates run it
// with upstream `transform.apply_registered_pass` (on tensors, before tiling);
// mlir-opt gets it from libMtunePlugin.so.
#pragma once

namespace mtune::strategies {

// The pass's name, as templates and mlir-opt name it.
inline constexpr char kSplitPairTransposesPassName[] = "mtune-split-pair-transposes";

// Registers the pass in MLIR's global pass registry (idempotent).
void RegisterSplitPairTransposesPass();

}  // namespace mtune::strategies
