// Cost-model features of a candidate: what search/'s `model` learns from. No MLIR
// here: the coordinator and the replay benchmark both compute them.
#pragma once

#include <string>
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

// The same row with what each feature is ("knob:tile_m1", "dim:m", "trips:tile_m1",
// "register_tile_intensity", ...), in the same order.
struct NamedFeature {
  std::string name;
  double value = 0;
};
std::vector<NamedFeature> NamedCandidateFeatures(const Problem& problem, const KnobValues& values);

// The problem dimension a tile_<dim><level> knob tiles ("tile_m2" -> "m", "tile_ow" ->
// "ow"); empty for a knob that is not a tile.
std::string TiledDimension(const std::string& knob);

// Names of a row, in order.
std::vector<std::string> FeatureNames(const std::vector<NamedFeature>& features);

// `features` (of another problem's candidate, perhaps of another version of the
// template, with a knob more or less) laid out as a row named `names`: what `features`
// lacks is NaN, which the cost model takes as missing. So results stored before a
// template gained a knob still teach the model what the knobs they share do.
std::vector<double> FeaturesAs(const std::vector<NamedFeature>& features, const std::vector<std::string>& names);

}  // namespace mtune::strategies
