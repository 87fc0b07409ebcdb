// What a search sees of a template's knob space for one problem: its free knobs.
//
// A knob marked `mtune.derived` (matmul_packed's peel_m2 and copy_back_c) is not a
// choice: the constraints fix it once the other knobs are chosen. Searched as a
// dimension of its own it would multiply the space by its options, most of whose
// combinations the constraints then reject, and it would give the cost model a
// feature that only restates others. So searches propose points over the free knobs
// only, and each point is completed here into a candidate with its derived knobs
// solved (strategies::SolveDerivedKnobs).
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "search/space.h"
#include "strategies/knob_space.h"

namespace mtune::server {

class CandidateSpace {
 public:
  CandidateSpace() = default;
  explicit CandidateSpace(strategies::KnobSpace knobs);

  // Every knob, derived ones included, with the template's constraints.
  const strategies::KnobSpace& knobs() const { return knobs_; }
  // The free knobs, in template order: what a search proposes points over.
  const search::Space& search_space() const { return search_space_; }

  // The candidate a point of search_space() stands for: its free knobs' values plus
  // the derived knobs that make the constraints hold. nullopt when the point is
  // malformed or no derived values satisfy the constraints (an invalid candidate).
  std::optional<strategies::KnobValues> Complete(const search::Point& point) const;

  // The point of search_space() for a candidate (its derived knobs are dropped).
  // InvalidArgument when a free knob is missing, unknown or not one of its options.
  absl::StatusOr<search::Point> PointOf(strategies::KnobValues values) const;

 private:
  strategies::KnobSpace knobs_;
  search::Space search_space_;
};

}  // namespace mtune::server
