// What a template's search space holds for one problem: how many of its candidates
// are valid, and whether each free knob changes the code it makes (two candidates
// that differ only in a knob the transforms never read are one program, compiled and
// measured twice). For template authors (`mtune space`) and the built-in templates'
// tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"

namespace mtune::strategies {

// A knob a search chooses: not derived, and with two options or more.
bool IsFreeKnob(const KnobSpec& knob);

struct CandidateCount {
  // Combinations of the free knobs' options (saturates at UINT64_MAX).
  uint64_t combinations = 0;
  // Those for which derived knobs exist that satisfy every constraint: exact when
  // `exact`, else estimated from a seeded sample.
  uint64_t valid = 0;
  bool exact = true;
};

// Counts the valid candidates exactly while there are at most `exact_limit`
// combinations, else estimates from `samples` seeded random ones.
CandidateCount CountCandidates(const KnobSpace& space, uint64_t exact_limit = 200000,
                               uint32_t samples = 20000, uint32_t seed = 1);

struct KnobAudit {
  std::string name;
  // Candidates moved in this knob (each to another option that keeps it valid).
  int compared = 0;
  // Of those, how many changed the payload after the transform interpreter.
  int changed = 0;
};

// From the default candidate and `random_bases` seeded random valid candidates,
// moves each free knob to another valid option and compares the printed payload
// after the template's @__transform_main, one entry per free knob in template order.
// Errors when a candidate does not instantiate or apply, or the template has no
// valid candidate for `problem`.
// `registers` as for ExtractKnobSpace.
absl::StatusOr<std::vector<KnobAudit>> AuditKnobs(absl::string_view template_text, const Problem& problem,
                                                  const VectorRegisters& registers = VectorRegisters::Avx512(),
                                                  int random_bases = 2, uint32_t seed = 7);

}  // namespace mtune::strategies
