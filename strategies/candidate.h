// Candidates: a template plus one value per knob, in canonical form. No MLIR here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "proto/mtune.pb.h"

namespace mtune::strategies {

// Knob name -> canonical value text. std::map keeps names sorted, as the canonical form wants.
using KnobValues = std::map<std::string, std::string>;

// What identifies a version of a template's text: StableHash of the text without its
// `//` comments and blank lines. Part of every candidate's hash, so that a candidate
// is the exact script it measured: once a template's code is edited, its knob values
// make new candidates, and results measured with the old code stay with the old
// candidates (and the scripts they ran) instead of being merged with results of the
// new code. Editing only comments keeps the candidates.
std::string TemplateDigest(const std::string& template_text);

// Builds the proto form: sorted knobs, canonical JSON and its hash (of the template
// name, its digest and the canonical JSON).
mtune::v1::Candidate MakeCandidate(const std::string& template_name, const std::string& template_digest,
                                   const KnobValues& values);

// Whether `candidate` is of the template text with `template_digest`: its hash is
// the one that text gives its name and knob values.
bool HasTemplateDigest(const mtune::v1::Candidate& candidate, const std::string& template_digest);

// The knob values of a proto candidate.
KnobValues ValuesOf(const mtune::v1::Candidate& candidate);

// The knob's value as a number when it is one and positive (a tile size, a count);
// nullopt when absent, not a number, or not positive. What the kernel estimates read.
std::optional<double> PositiveKnob(const KnobValues& values, std::string_view name);

// Canonical JSON: an object with sorted keys; integer-looking values become JSON numbers.
std::string CanonicalJson(const KnobValues& values);

// 16 lower-case hex digits of FNV-1a 64 over `text`: stable across runs and machines.
std::string StableHash(const std::string& text);

}  // namespace mtune::strategies
