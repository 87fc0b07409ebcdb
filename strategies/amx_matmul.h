// The `mtune-vnni-matmul-to-amx` pass: rewrites a bf16 matmul tile whose k is split
// into pairs (the linalg.generic that `transform.structured.pack` packed_sizes =
// [0, 0, 2] makes of a linalg.matmul, after bufferization) into Intel AMX tile
// operations: tdpbf16ps on 16 x 16 f32 accumulator tiles that stay in tile
// registers across the k loop. MLIR 22 has the `amx` dialect's ops but no rewrite
// from linalg or vector.contract to them, and no transform op. Templates run it with
// upstream `transform.apply_registered_pass`; mlir-opt gets it from libMtunePlugin.so.
//
// The op it rewrites, on memrefs of static shape (from tiling, after bufferization):
//   A [M][P][2] bf16 (a view of row-major A, pairs along k), strides [*, 2, 1]
//   B [P][N][2] bf16 (the VNNI layout: a copy), strides [*, 2, 1]
//   C [M][N] f32, strides [*, 1]
//   C[m][n] += extf(A[m][p][t]) * extf(B[p][n][t]), summed over p and t.
// Any M, N and P: the accumulators are tiles of up to 16 rows x 16 columns, k steps
// of up to 16 pairs (32 values); the last tile or step of each takes what is left.
// A matching op it cannot rewrite (dynamic shapes, other strides) fails the pass
// with an error that says why, rather than staying a scalar loop nest.
#pragma once

namespace mtune::strategies {

// The pass's name, as templates and mlir-opt name it.
inline constexpr char kVnniMatmulToAmxPassName[] = "mtune-vnni-matmul-to-amx";

// Registers the pass in MLIR's global pass registry (idempotent).
void RegisterVnniMatmulToAmxPass();

}  // namespace mtune::strategies
