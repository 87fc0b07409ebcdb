// A first-principles estimate of a row sum's speed (reduce_tiled on reduce_rows_2d),
// the counterpart of register_tile_estimate.h for a kernel that streams its input
// once: what a search knows about the space before its first measurement. No MLIR.
#pragma once

#include <optional>

#include "strategies/candidate.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {

// The share of the vector-load rate (2 vector loads a cycle: every element is loaded
// once and added once) the candidate could reach, in (0, 1], from a cycle count of
// one group of rows summed side by side (`bands` x `tile_m` rows):
//  - a split by S keeps rows x ceil(S / lanes) partial sums in registers; a step of
//    the loop over the row loads and adds each once, and cannot be shorter than the
//    latency of an add (4 cycles: the step's adds wait on the previous step's);
//    partial sums beyond half the registers spill, and a spilled sum adds a store and
//    a reload to its add;
//  - each row then merges its partial sums once: a shuffle tree (innerreduction,
//    two operations per halving) or a transpose and S - 1 adds of rows lanes
//    (innerparallel);
//  - without a split each tile_m x tile_n tile is reduced on its own into the output,
//    so the tiles of a row form a chain through memory: a tile takes at least the
//    latency of its reduction plus a store and reload of the output (4 cycles);
//  - row tiles that do not divide a band's rows pad.
// Vector operations issue 2 a cycle. Caches and prefetchers are not modelled (the
// input is assumed to stream at the load rate). nullopt for other families or values
// without the template's knobs.
std::optional<double> RowSumEstimate(const Problem& problem, const KnobValues& values,
                                     const VectorRegisters& registers);

}  // namespace mtune::strategies
