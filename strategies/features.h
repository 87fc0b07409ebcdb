// Cost-model features of a candidate: what search/'s `model` learns from. No MLIR
// here: the coordinator and the replay benchmark both compute them.
#pragma once

#include <vector>

#include "strategies/candidate.h"
#include "strategies/problem.h"

namespace mtune::strategies {

// One row of features, the same length for every candidate of one (problem,
// template): log2 of every numeric knob value (else a small code of the word),
// log2 of every problem dimension, and, for matmul-like templates with tile_{m,n,k}{1,2} knobs,
// derived quantities: bytes of the cache tile and of the register tile (which cache
// level they fit), the register tile's arithmetic intensity and accumulator
// registers, trip counts, and the work wasted by padding partial tiles.
std::vector<double> CandidateFeatures(const Problem& problem, const KnobValues& values);

}  // namespace mtune::strategies
