// An estimate of a row sum's speed (reduce_tiled on reduce_rows_2d) from its loop
// shape: the counterpart of register_tile_estimate.h for a kernel that streams its
// input once. What a search knows about the space before its first measurement. No MLIR.
#pragma once

#include <optional>

#include "strategies/candidate.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {

// The share of the stream rate (32 bytes a cycle, what a core's L2 feeds its loads)
// the candidate could reach, in (0, 1], from a cycle count of one group of
// r = bands x tile_m rows summed side by side, each step reading a width w of every
// row (w = split_reduction, or tile_n without a split):
//  - a step cannot be shorter than an add's latency (4 cycles: its adds wait on the
//    previous step's) nor than its bytes at the stream rate, so a step must carry
//    128 bytes (4 x 32) to keep the stream busy;
//  - lines from beyond the target's L2 (`l2_bytes`, 0 when unknown: not rated) come
//    at the stream rate only to 4 rows side by side, fewer reaching (r / 4)^(1/4) of
//    it; none of the input's lines are taken to come from beyond the L2 up to half of
//    it, all from twice it, in proportion between. On reduce_rows 384x640 (Zen 5,
//    1 MiB L2, an input of 0.94 of it) the best single row measured 0.72 of the best,
//    the best two rows 0.87, four and eight rows the best; on the znver4 tables (1 MiB
//    L2; their files do not record it, so their replays do not rate this) the best
//    single row lost 8% at 0.63 of the L2, 10% at 0.76, 17% at 0.82, nothing at 0.5,
//    and nothing at 4 either, where 1, 2 and 4 rows measured alike (ranking 4 first
//    there costs nothing); on Intel 384x640 (2 MiB L2, 0.47 of it) 1 row was among
//    the best;
//  - with a split each row merges its partial sums once (a shuffle tree for
//    innerreduction, a transpose of r x w for innerparallel); without one every tile
//    merges and adds into the output;
//  - a width that does not divide n leaves each band's row tile a masked remainder
//    whose partial sums live in memory (30 cycles a tile, set from one table); without
//    a split every tile is masked;
//  - partial sums beyond half the registers spill (each adds a store and a reload);
//  - loads narrower than a vector register cost nothing of themselves: the stream,
//    not the lanes, bounds a row sum, so only the bytes a step carries count;
//  - rows whose addresses fall in one L1 set beyond its ways evict each other's lines
//    (8 ways of 4 KiB: a virtually indexed L1D with 4 KiB pages has 4 KiB ways, and
//    8 is the fewest ways of current x86 cores);
//  - a tie-break: each row beyond the first costs 2% (one more stream for the
//    prefetchers and one more line in every L1 set), so among candidates at the
//    stream rate the fewest rows, and so the widest steps, rank first;
//  - row tiles that do not divide a band's rows pad.
// nullopt for other families or values without the template's knobs.
std::optional<double> RowSumEstimate(const Problem& problem, const KnobValues& values,
                                     const VectorRegisters& registers, int64_t l2_bytes = 0);

}  // namespace mtune::strategies
