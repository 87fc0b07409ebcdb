#include "strategies/default_candidate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"

namespace mtune::strategies {
namespace {

std::optional<double> Number(const std::string& text) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value <= 0) return std::nullopt;
  return static_cast<double>(value);
}

std::string NearestOption(const KnobSpec& knob) {
  if (!knob.default_value.empty()) return knob.default_value;
  if (knob.options.empty()) return "";
  const std::optional<double> wanted = Number(knob.selected);
  if (!wanted) return knob.options.front();
  std::string nearest = knob.options.front();
  double nearest_distance = std::numeric_limits<double>::infinity();
  std::optional<double> nearest_value;
  for (const std::string& option : knob.options) {
    const std::optional<double> value = Number(option);
    if (!value) continue;
    const double distance = std::abs(std::log2(*value) - std::log2(*wanted));
    if (distance < nearest_distance ||
        (distance == nearest_distance && nearest_value && *value < *nearest_value)) {
      nearest = option;
      nearest_distance = distance;
      nearest_value = value;
    }
  }
  return nearest;
}

size_t PositionOf(const KnobSpec& knob, const std::string& value) {
  return static_cast<size_t>(std::find(knob.options.begin(), knob.options.end(), value) -
                             knob.options.begin());
}

// One way to move away from the nearest defaults: which knobs change, to what.
struct Change {
  size_t distance = 0;  // summed |option position - base position|
  KnobValues values;
};

}  // namespace

KnobValues NearestDefaults(const KnobSpace& space) {
  KnobValues values;
  for (const KnobSpec& knob : space.knobs) values[knob.name] = NearestOption(knob);
  return values;
}

std::optional<KnobValues> DefaultCandidate(const KnobSpace& space) {
  const KnobValues base = NearestDefaults(space);
  if (space.SatisfiesConstraints(base)) return base;
  const size_t n = space.knobs.size();
  std::vector<size_t> base_position(n);
  for (size_t i = 0; i < n; ++i)
    base_position[i] = PositionOf(space.knobs[i], base.at(space.knobs[i].name));
  auto distance = [&](size_t knob, size_t option) {
    return option > base_position[knob] ? option - base_position[knob]
                                        : base_position[knob] - option;
  };
  // One changed knob, then two. Built-in spaces are small (tens of knobs, tens of
  // options); a submitted template could make the pairs explode, so pairs are only
  // tried when there are at most kMaxPairs of them.
  constexpr uint64_t kMaxPairs = 100000;
  uint64_t pairs = 0, singles = 0;
  for (const KnobSpec& knob : space.knobs) {
    const uint64_t others = knob.options.empty() ? 0 : knob.options.size() - 1;
    pairs += singles * others;
    singles += others;
    if (pairs > kMaxPairs) break;
  }
  for (size_t changed = 1; changed <= (pairs <= kMaxPairs ? 2 : 1); ++changed) {
    std::vector<Change> changes;
    for (size_t a = n; a-- > 0;) {
      const KnobSpec& ka = space.knobs[a];
      for (size_t oa = 0; oa < ka.options.size(); ++oa) {
        if (oa == base_position[a]) continue;
        if (changed == 1) {
          Change c{distance(a, oa), base};
          c.values[ka.name] = ka.options[oa];
          changes.push_back(std::move(c));
          continue;
        }
        for (size_t b = a; b-- > 0;) {
          const KnobSpec& kb = space.knobs[b];
          for (size_t ob = 0; ob < kb.options.size(); ++ob) {
            if (ob == base_position[b]) continue;
            Change c{distance(a, oa) + distance(b, ob), base};
            c.values[ka.name] = ka.options[oa];
            c.values[kb.name] = kb.options[ob];
            changes.push_back(std::move(c));
          }
        }
      }
    }
    // Least distance first; among equals, the enumeration order (last-declared knobs
    // first) is kept by the stable sort.
    std::stable_sort(changes.begin(), changes.end(),
                     [](const Change& x, const Change& y) { return x.distance < y.distance; });
    for (const Change& c : changes)
      if (space.SatisfiesConstraints(c.values)) return c.values;
  }
  return std::nullopt;
}

}  // namespace mtune::strategies
