// Knob spaces and the points in them: the vocabulary every search algorithm shares.
#ifndef MTUNE_SEARCH_SPACE_H_
#define MTUNE_SEARCH_SPACE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mtune::search {

// One named free choice of a strategy template and its option set (canonical text).
struct Knob {
  std::string name;
  std::vector<std::string> options;
};

// The cartesian product of a template's knobs for one problem.
struct Space {
  std::vector<Knob> knobs;
};

// A candidate as option indices, one per knob of its Space, in knob order.
using Point = std::vector<uint32_t>;

// Knob name -> chosen option text; the form strategies/ and the proto Candidate use.
using KnobValues = std::map<std::string, std::string>;

// Number of points in `space`, saturating at UINT64_MAX; 0 if any knob has no options.
uint64_t SpaceSize(const Space& space);

// OK when knob names are unique and non-empty and no knob repeats an option.
absl::Status ValidateSpace(const Space& space);

// OK when `point` has one in-range option index per knob of `space`.
absl::Status ValidatePoint(const Space& space, const Point& point);

// The point at mixed-radix `index` (last knob varies fastest); index < SpaceSize.
Point PointAtIndex(const Space& space, uint64_t index);

// Inverse of PointAtIndex; only meaningful when SpaceSize(space) < UINT64_MAX.
uint64_t IndexOfPoint(const Space& space, const Point& point);

// Option texts of a valid point, keyed by knob name.
absl::StatusOr<KnobValues> ValuesFromPoint(const Space& space, const Point& point);

// The point choosing exactly `values`; every knob must be present and nothing else.
absl::StatusOr<Point> PointFromValues(const Space& space, const KnobValues& values);

// The point closest to `values`, which may come from another problem's space: exact
// options where they exist, else the numerically nearest option on a log scale; a
// knob `values` lacks (a candidate stored before the template gained it) takes its
// value in `fallback` (the template's default), mapped alike; nullopt when a knob is
// in neither or a word has no match. Warm starts map another problem's best
// candidates into this space with it.
std::optional<Point> NearestPoint(const Space& space, const KnobValues& values, const KnobValues& fallback = {});

// Human-readable "{name=value, ...}" for logs and error messages.
std::string FormatPoint(const Space& space, const Point& point);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_SPACE_H_
