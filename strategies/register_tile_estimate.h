// A first-principles estimate of a candidate's speed, for templates whose inner
// kernel is a register tile of FMAs (broadcast, or a depthwise filter sliding over
// its input row): what a search knows about a space before its first measurement.
// No MLIR here: the coordinator and the replay benchmark both compute it.
#pragma once

#include <optional>
#include <string_view>

#include "strategies/candidate.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {

// The share of the FMA peak the candidate's register tile could reach, in (0, 1]:
//  - a rows x cols tile of accumulators (cols in vectors of `registers.bytes`) does one
//    FMA per accumulator per reduction step, and a step cannot take fewer cycles than
//    its FMAs, its loads (as many load as FMA ports), or the FMA latency (8
//    accumulators in flight: 4 cycles x 2 ports, true of every x86 core mtune has run
//    on); the matmul templates' steps take a smooth maximum of the three instead,
//    (f^4 + l^4 + 8^4)^(1/4) slots, so a tile near two bounds rates below one clear
//    of them, as their tables measure;
//  - conv and matmul tiles load `rows` broadcasts and `cols / lanes` vectors a step;
//    a depthwise tile (rows output positions by cols channels) loads, per filter row
//    of kw taps, its input row slice and kw filter vectors per channel vector, so a
//    few loads a step where kw > 1: these tiles are bound by the latency, not loads;
//  - at the end of each cache tile of the reduction that encloses the register tile's
//    loops (tile_k1 of the matmul templates) the accumulators go through memory: a
//    load (2 a cycle) and a store (1 a cycle) each, ceil(k / k1) times per tile of
//    output, against the k steps' cycles;
//  - accumulators beyond those the template's register constraint allows (tables
//    measured on an earlier template hold such tiles) spill: each goes through
//    memory, a load and a store, on every step;
//  - lanes of the last vector beyond `cols` are wasted;
//  - work on the padding of partial tiles (every tile_<dim><level> knob against its
//    problem dimension) is wasted;
//  - matmul_packed's pack_a = yes or only copies A once per cache tile of n, a store
//    per tile_k2 elements (2 stores a cycle), against the FMA steps; except where k
//    is padded to tile_k1 and the level-1 pad copies A whatever pack_a is.
// Caches, B's packing, loop orders and lowerings are not modelled: it tells tile
// shapes, reduction tiles and A's packing apart, not the other candidates of one of
// them. nullopt for a template it does not know (its inner kernel is not such a
// tile: reductions, copies, AMX) or values without its tile knobs.
// Whether RegisterTileEstimate knows the template (its values may still lack the knobs).
bool HasRegisterTileEstimate(std::string_view template_name);

std::optional<double> RegisterTileEstimate(std::string_view template_name, const Problem& problem,
                                           const KnobValues& values, const VectorRegisters& registers);

}  // namespace mtune::strategies
