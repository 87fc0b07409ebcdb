// The `mtune-flatten-transfers` pass: upstream's patterns that turn an n-D
// vector.transfer_read / transfer_write over contiguous row-major memory into one
// 1-D transfer (vector::populateFlattenVectorTransferPatterns), which MLIR 22 has
// no transform op for. Without it a vector<1x16x2xbf16> read of a VNNI-packed bf16
// operand was lowered element by element (16 reads of 2 elements and shuffles)
// instead of one 64-byte load. Templates run it with upstream
// `transform.apply_registered_pass`; mlir-opt gets it from libMtunePlugin.so.
#pragma once

namespace mtune::strategies {

// The pass's name, as templates and mlir-opt name it.
inline constexpr char kFlattenTransfersPassName[] = "mtune-flatten-transfers";

// Registers the pass in MLIR's global pass registry (idempotent).
void RegisterFlattenTransfersPass();

}  // namespace mtune::strategies
