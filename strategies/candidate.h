// Candidates: a template plus one value per knob, in canonical form. No MLIR here.
#pragma once

#include <map>
#include <string>

#include "proto/mtune.pb.h"

namespace mtune::strategies {

// Knob name -> canonical value text. std::map keeps names sorted, as the canonical form wants.
using KnobValues = std::map<std::string, std::string>;

// Builds the proto form: sorted knobs, canonical JSON and its hash.
mtune::v1::Candidate MakeCandidate(const std::string& template_name, const KnobValues& values);

// The knob values of a proto candidate.
KnobValues ValuesOf(const mtune::v1::Candidate& candidate);

// Canonical JSON: an object with sorted keys; integer-looking values become JSON numbers.
std::string CanonicalJson(const KnobValues& values);

// 16 lower-case hex digits of FNV-1a 64 over `text`: stable across runs and machines.
std::string StableHash(const std::string& text);

}  // namespace mtune::strategies
