#include "strategies/default_candidate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <utility>
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

// One way to move away from the nearest defaults: up to four knobs changed, each
// to an option (indices into space.knobs and its options), and how far that moves.
struct Change {
  size_t distance = 0;  // summed |option position - base position|
  uint8_t count = 0;
  std::array<std::pair<uint32_t, uint32_t>, 4> moves{};
};

}  // namespace

std::optional<KnobValues> SolveDerivedKnobs(const KnobSpace& space, KnobValues values,
                                            const std::set<std::string>& keep) {
  std::vector<const KnobSpec*> derived;  // the ones to solve
  for (const KnobSpec& knob : space.knobs) {
    if (!knob.derived || knob.options.empty()) continue;
    // A search chooses only the free knobs: derived ones it leaves out start from
    // their first option, so that a constraint that ignores them still sees a value.
    if (!values.contains(knob.name)) values[knob.name] = knob.options.front();
    if (!keep.contains(knob.name)) derived.push_back(&knob);
  }
  if (space.SatisfiesConstraints(values)) return values;
  // Derived knobs are flags and small choices; more combinations than this would
  // mean a template that declares real choices as derived.
  constexpr size_t kMaxCombinations = 256;
  size_t combinations = 1;
  for (const KnobSpec* knob : derived) {
    combinations *= knob->options.size();
    if (combinations > kMaxCombinations) return std::nullopt;
  }
  if (derived.empty()) return std::nullopt;
  for (size_t index = 0; index < combinations; ++index) {
    size_t rest = index;
    for (size_t d = derived.size(); d-- > 0;) {
      values[derived[d]->name] = derived[d]->options[rest % derived[d]->options.size()];
      rest /= derived[d]->options.size();
    }
    if (space.SatisfiesConstraints(values)) return values;
  }
  return std::nullopt;
}

KnobValues NearestDefaults(const KnobSpace& space) {
  KnobValues values;
  for (const KnobSpec& knob : space.knobs) values[knob.name] = NearestOption(knob);
  return values;
}

namespace {

// `base` with the knobs `point` names changed (a start point or a fallback default):
// a value that is no option for this problem, or a tile that would pad its dimension
// by more than an eighth, keeps the base's; derived knobs solved again. nullopt when
// the constraints cannot hold.
std::optional<KnobValues> ApplyPoint(const KnobSpace& space, KnobValues base, const KnobValues& point) {
  for (const KnobSpec& knob : space.knobs) {
    auto wanted = point.find(knob.name);
    if (wanted == point.end() || knob.derived) continue;
    if (std::find(knob.options.begin(), knob.options.end(), wanted->second) == knob.options.end()) continue;
    if (knob.tiled_extent > 0) {
      const std::optional<double> tile = Number(wanted->second);
      if (!tile) continue;
      if (PadsMoreThanAnEighth(static_cast<int64_t>(*tile), knob.tiled_extent)) continue;
    }
    base[knob.name] = wanted->second;
  }
  return SolveDerivedKnobs(space, std::move(base));
}

}  // namespace

std::optional<KnobValues> DefaultCandidate(const KnobSpace& space) {
  const KnobValues base = NearestDefaults(space);
  if (std::optional<KnobValues> solved = SolveDerivedKnobs(space, base)) return solved;
  for (const KnobValues& point : space.fallback_defaults)
    if (std::optional<KnobValues> fallback = ApplyPoint(space, base, point)) return fallback;
  const size_t n = space.knobs.size();
  std::vector<size_t> base_position(n);
  for (size_t i = 0; i < n; ++i)
    base_position[i] = PositionOf(space.knobs[i], base.at(space.knobs[i].name));
  auto distance = [&](size_t knob, size_t option) {
    return option > base_position[knob] ? option - base_position[knob]
                                        : base_position[knob] - option;
  };
  // One changed knob, then two, three, four (a transpose within the L2 with odd rows
  // gives up column blocks, streaming stores, prefetches and the rotated order: four
  // knobs whose defaults serve the large ones). Built-in spaces are small (tens of
  // knobs, tens of options); a submitted template could make the combinations
  // explode, so a number of changed knobs is only tried while its combinations
  // number at most kMaxCombinations (the elementary symmetric sums of the knobs'
  // other options).
  constexpr double kMaxCombinations = 2e6;
  std::array<double, 5> combinations = {1, 0, 0, 0, 0};
  for (const KnobSpec& knob : space.knobs) {
    if (knob.derived) continue;  // solved, not changed
    const double others = knob.options.empty() ? 0 : static_cast<double>(knob.options.size() - 1);
    for (size_t j = 4; j >= 1; --j) combinations[j] += combinations[j - 1] * others;
  }
  for (size_t changed = 1; changed <= 4 && combinations[changed] <= kMaxCombinations; ++changed) {
    std::vector<Change> changes;
    changes.reserve(static_cast<size_t>(combinations[changed]));
    // Knobs in decreasing declaration order: among equal distances the stable sort
    // below keeps the last-declared (finest) knobs first.
    Change current;
    auto enumerate = [&](auto&& self, size_t below, size_t left) -> void {
      if (left == 0) {
        changes.push_back(current);
        return;
      }
      for (size_t k = below; k-- > 0;) {
        if (space.knobs[k].derived) continue;
        for (size_t o = 0; o < space.knobs[k].options.size(); ++o) {
          if (o == base_position[k]) continue;
          current.moves[current.count++] = {static_cast<uint32_t>(k), static_cast<uint32_t>(o)};
          current.distance += distance(k, o);
          self(self, k, left - 1);
          current.distance -= distance(k, o);
          --current.count;
        }
      }
    };
    enumerate(enumerate, n, changed);
    // Least distance first; among equals, the enumeration order is kept.
    std::stable_sort(changes.begin(), changes.end(),
                     [](const Change& x, const Change& y) { return x.distance < y.distance; });
    for (const Change& c : changes) {
      KnobValues values = base;
      for (uint8_t i = 0; i < c.count; ++i) {
        const KnobSpec& knob = space.knobs[c.moves[i].first];
        values[knob.name] = knob.options[c.moves[i].second];
      }
      if (std::optional<KnobValues> solved = SolveDerivedKnobs(space, std::move(values))) return solved;
    }
  }
  return std::nullopt;
}

std::vector<KnobValues> StartingCandidates(const KnobSpace& space) {
  std::vector<KnobValues> starts;
  std::optional<KnobValues> defaults = DefaultCandidate(space);
  if (!defaults) return starts;
  starts.push_back(*defaults);
  for (const KnobValues& point : space.start_points) {
    std::optional<KnobValues> solved = ApplyPoint(space, *defaults, point);
    if (solved && std::find(starts.begin(), starts.end(), *solved) == starts.end())
      starts.push_back(*solved);
  }
  return starts;
}

}  // namespace mtune::strategies
