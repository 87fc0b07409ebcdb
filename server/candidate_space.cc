#include "server/candidate_space.h"

#include <utility>

#include "strategies/default_candidate.h"

namespace mtune::server {

CandidateSpace::CandidateSpace(strategies::KnobSpace knobs) : knobs_(std::move(knobs)) {
  for (const strategies::KnobSpec& knob : knobs_.knobs)
    if (!knob.derived) search_space_.knobs.push_back({knob.name, knob.options});
}

std::optional<strategies::KnobValues> CandidateSpace::Complete(const search::Point& point) const {
  absl::StatusOr<strategies::KnobValues> values = search::ValuesFromPoint(search_space_, point);
  if (!values.ok()) return std::nullopt;
  return strategies::SolveDerivedKnobs(knobs_, *std::move(values));
}

absl::StatusOr<search::Point> CandidateSpace::PointOf(strategies::KnobValues values) const {
  for (const strategies::KnobSpec& knob : knobs_.knobs)
    if (knob.derived) values.erase(knob.name);
  return search::PointFromValues(search_space_, values);
}

}  // namespace mtune::server
