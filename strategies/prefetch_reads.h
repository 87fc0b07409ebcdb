// The `mtune-prefetch-reads` pass: software prefetch, into the L2, of what a tile
// loop will read some iterations ahead. Templates mark the loop and run the pass
// with upstream `transform.apply_registered_pass` (after bufferization and vector
// lowering); mlir-opt gets it from libMtunePlugin.so. No upstream transform op
// inserts a CPU prefetch (MLIR 22's only one is XeGPU's).
#pragma once

namespace mtune::strategies {

// An scf.for carrying this i64 attribute D > 0 gets, before every read of a memref
// in its body (vector.load, vector.maskedload, vector.transfer_read; nested loops
// included) whose address depends on its induction variable i, `memref.prefetch`es
// (read, locality 2: the L2, data) of the 64-byte lines that read covers in
// iteration i + D * step, or in i itself where that is past the loop's end (of a
// permuted transfer read, the line it starts at only). The pass removes
// the attribute; D = 0 leaves the loop as it is. A marked loop with no such read is
// an error, as is index arithmetic it cannot recompute for the later iteration (an
// op with side effects or regions in between): a candidate that asks for
// prefetches and gets none must not pass for one that did.
inline constexpr char kPrefetchAheadAttr[] = "mtune.prefetch_ahead";

// The pass's name, as templates and mlir-opt name it.
inline constexpr char kPrefetchReadsPassName[] = "mtune-prefetch-reads";

// Registers the pass in MLIR's global pass registry (idempotent).
void RegisterPrefetchReadsPass();

}  // namespace mtune::strategies
