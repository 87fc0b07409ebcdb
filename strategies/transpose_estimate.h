// An estimate of a transpose's speed (copy_tiled on transpose_2d) from its tile shape
// and lowering: the counterpart of row_sum_estimate.h for a kernel that moves each
// element once through a shuffle network. What a search knows about the space before
// its first measurement. No MLIR.
#pragma once

#include <cstdint>
#include <optional>

#include "strategies/candidate.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {

// The share of the stream rate (32 bytes a cycle between the L2 and the core, input
// and output together) the candidate could reach, in (0, 1], from a cycle count of
// one tile of r = tile_r output rows by c = tile_c output columns. The tile loads c
// input rows of r elements, transposes them in registers and stores r output rows of
// c elements:
//  - the bytes it moves at the stream rate. An output row's line is written by the
//    next tiles along the row before it leaves the L1, so writes count their bytes.
//    An input line is read again by the next band of rows only after the band has
//    swept a line of every input row it crosses (m of them, or block_c in column
//    blocks); where those lines overflow one L1 set (memory_geometry.h) every visit
//    fetches whole lines, so rows of r elements narrower than a line move more than
//    they use. Not where input and output together overflow the target's L2
//    (`l2_bytes`, 0 when unknown): then the refetches come from the L2 in the shadow
//    of the compulsory traffic from beyond it. On transpose 512x768 (3 MiB, Intel
//    Xeon with a 2 MiB L2) the best measured were 8 x 8 tiles the refetches rated at
//    0.67, and the 16 x 16 tiles rated best measured 0.80-0.95 of them;
//  - its loads (2 a cycle) and stores (1 a cycle);
//  - its shuffles, one a cycle: the two lowerings written for one shape emit their
//    known networks, 4 stages of 16 for shuffle_16x16 (16 x 16 of 4-byte elements in
//    64-byte registers) and 3 of 8 for avx2 (8 x 8 of 4-byte elements in 32-byte
//    registers, whose first two stages stay within 128-bit lanes and issue two a
//    cycle: 12 cycles. Rated at 24 until session 68, its tiles ranked below the same
//    tiles as a generic shuffle, which they measure level with); every other
//    tile (and lowering) packs input rows narrower than a register into full ones
//    (one insert a row) and becomes a generic shuffle whose output registers each
//    gather their lanes from s input registers by s - 1 two-source permutes;
//  - a tile held twice (as loaded and transposed) beyond the register file spills;
//  - tiles that do not divide the output pad.
// Blocks along rows, prefetches, streaming stores, the tile order and unrolling are
// not rated. Unrolling was, as a 2% tie-break per unrolled tile, first against it
// (the plain loop measured best on the two tables the rule was shaped on), then
// against it only within a 1 MiB L2: of the two tables held out from those versions,
// transpose 384x640 and 200x328 (Intel Xeon, 2 MiB L2: both within it), the best
// of each were unrolled by 4, so the sign is the host's, not the footprint's.
// nullopt for other families or values without the template's knobs.
std::optional<double> TransposeEstimate(const Problem& problem, const KnobValues& values,
                                        const VectorRegisters& registers, int64_t l2_bytes);

}  // namespace mtune::strategies
