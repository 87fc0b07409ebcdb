#include "search/space.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mtune::search {

uint64_t SpaceSize(const Space& space) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t size = 1;
  bool saturated = false;
  for (const Knob& knob : space.knobs) {
    const uint64_t radix = knob.options.size();
    // An empty knob empties the space even after saturation, so keep scanning.
    if (radix == 0) return 0;
    if (saturated) continue;
    if (size > kMax / radix) {
      saturated = true;
      size = kMax;
    } else {
      size *= radix;
    }
  }
  return size;
}

absl::Status ValidateSpace(const Space& space) {
  std::set<std::string> names;
  for (const Knob& knob : space.knobs) {
    if (knob.name.empty()) {
      return absl::InvalidArgumentError("knob with an empty name");
    }
    if (!names.insert(knob.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate knob '", knob.name, "'"));
    }
    std::set<std::string> options;
    for (const std::string& option : knob.options) {
      if (!options.insert(option).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("knob '", knob.name, "' lists option '", option, "' twice"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePoint(const Space& space, const Point& point) {
  if (point.size() != space.knobs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("point has ", point.size(),
                                                   " indices but the space has ",
                                                   space.knobs.size(), " knobs"));
  }
  for (size_t i = 0; i < point.size(); ++i) {
    if (point[i] >= space.knobs[i].options.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "knob '", space.knobs[i].name, "': option index ", point[i], " out of range (",
          space.knobs[i].options.size(), " options)"));
    }
  }
  return absl::OkStatus();
}

Point PointAtIndex(const Space& space, uint64_t index) {
  Point point(space.knobs.size(), 0);
  for (size_t i = space.knobs.size(); i-- > 0;) {
    const uint64_t radix = space.knobs[i].options.size();
    point[i] = static_cast<uint32_t>(index % radix);
    index /= radix;
  }
  return point;
}

uint64_t IndexOfPoint(const Space& space, const Point& point) {
  uint64_t index = 0;
  for (size_t i = 0; i < space.knobs.size(); ++i) {
    index = index * space.knobs[i].options.size() + point[i];
  }
  return index;
}

absl::StatusOr<KnobValues> ValuesFromPoint(const Space& space, const Point& point) {
  if (absl::Status status = ValidatePoint(space, point); !status.ok()) return status;
  KnobValues values;
  for (size_t i = 0; i < point.size(); ++i) {
    values[space.knobs[i].name] = space.knobs[i].options[point[i]];
  }
  return values;
}

std::optional<Point> NearestPoint(const Space& space, const KnobValues& values, const KnobValues& fallback) {
  Point point;
  for (const Knob& knob : space.knobs) {
    auto it = values.find(knob.name);
    if (it == values.end() && (it = fallback.find(knob.name)) == fallback.end()) return std::nullopt;
    auto exact = std::find(knob.options.begin(), knob.options.end(), it->second);
    if (exact != knob.options.end()) {
      point.push_back(static_cast<uint32_t>(exact - knob.options.begin()));
      continue;
    }
    double want = 0;
    if (!absl::SimpleAtod(it->second, &want) || want <= 0) return std::nullopt;
    std::optional<uint32_t> nearest;
    double nearest_distance = 0;
    for (uint32_t i = 0; i < knob.options.size(); ++i) {
      double option = 0;
      if (!absl::SimpleAtod(knob.options[i], &option) || option <= 0) continue;
      const double distance = std::abs(std::log2(option / want));
      if (!nearest || distance < nearest_distance) nearest = i, nearest_distance = distance;
    }
    if (!nearest) return std::nullopt;
    point.push_back(*nearest);
  }
  return point;
}

absl::StatusOr<Point> PointFromValues(const Space& space, const KnobValues& values) {
  Point point;
  point.reserve(space.knobs.size());
  for (const Knob& knob : space.knobs) {
    auto it = values.find(knob.name);
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrCat("no value for knob '", knob.name, "'"));
    }
    uint32_t found = 0;
    while (found < knob.options.size() && knob.options[found] != it->second) ++found;
    if (found == knob.options.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("knob '", knob.name, "' has no option '", it->second,
                       "' (options: ", absl::StrJoin(knob.options, ", "), ")"));
    }
    point.push_back(found);
  }
  if (values.size() != space.knobs.size()) {
    // Every knob matched, so the surplus entries name knobs the space lacks.
    for (const auto& [name, value] : values) {
      bool known = false;
      for (const Knob& knob : space.knobs) known = known || knob.name == name;
      if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown knob '", name, "'"));
    }
  }
  return point;
}

std::string FormatPoint(const Space& space, const Point& point) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < point.size(); ++i) {
    const bool known = i < space.knobs.size() && point[i] < space.knobs[i].options.size();
    parts.push_back(known ? absl::StrCat(space.knobs[i].name, "=",
                                         space.knobs[i].options[point[i]])
                          : absl::StrCat("#", i, "=?", point[i]));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

}  // namespace mtune::search
