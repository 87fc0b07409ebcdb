// The `mtune-rotate-tiles` pass: visits the tiles of a 2-D tile loop nest in a
// rotated (diagonal) order. Templates run it with upstream
// `transform.apply_registered_pass`; mlir-opt gets it from libMtunePlugin.so.
#pragma once

namespace mtune::strategies {

// An scf.for carrying this unit attribute (the outer loop of a 2-D tile nest) has
// its tiles visited in rotated order by the pass: inside each scf.for directly in
// its body (the inner tile loops: one, or a main and a remainder loop once peeled
// or unrolled), its induction variable is replaced by lb + ((q + k) mod T) * step,
// where q is its iteration number, k the inner loop's and T its trip count. Every
// (outer, inner) tile is still visited once, but consecutive inner iterations
// touch different outer tiles. With no inner loop (folded away: one inner tile)
// that is the identity. The attribute asserts that the tiles are independent (a
// transpose's are); templates set it when tiling, and the pass removes it.
inline constexpr char kRotatableTilesAttr[] = "mtune.rotatable_tiles";

// The pass's name, as templates and mlir-opt name it.
inline constexpr char kRotateTilesPassName[] = "mtune-rotate-tiles";

// Registers the pass in MLIR's global pass registry (idempotent).
void RegisterRotateTilesPass();

}  // namespace mtune::strategies
