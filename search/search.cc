#include "search/search.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "search/annealing.h"
#include "search/exhaustive.h"
#include "search/genetic.h"
#include "search/model.h"
#include "search/random.h"

namespace mtune::search {
namespace {

// absl::string_view is not std::string_view in this abseil build, hence the
// std::string copies of std::string_view arguments passed to absl::StrCat below.
using Factory = std::unique_ptr<SearchAlgorithm> (*)(const Space&, const SearchOptions&);

struct Entry {
  std::string_view name;
  Factory make;
};

// Sorted by name; the one place a new algorithm is registered.
constexpr Entry kAlgorithms[] = {
    {"annealing", &MakeAnnealingSearch},
    {"exhaustive", &MakeExhaustiveSearch},
    {"genetic", &MakeGeneticSearch},
    {"model", &MakeModelSearch},
    {"random", &MakeRandomSearch},
};

absl::Status ValidatePoints(const Space& space, const std::vector<Point>& points,
                            std::string_view what) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (absl::Status status = ValidatePoint(space, points[i]); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(what), "[", i, "] does not fit the space: ", status.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<double> KnobFeatures(const Space& space, const Point& point) {
  std::vector<double> features;
  features.reserve(point.size());
  for (size_t i = 0; i < point.size() && i < space.knobs.size(); ++i) {
    double value = 0;
    const std::string& option = space.knobs[i].options[point[i]];
    // Tile sizes act multiplicatively, so their log is the natural scale.
    features.push_back(absl::SimpleAtod(option, &value) && value > 0 ? std::log2(value)
                                                                     : static_cast<double>(point[i]));
  }
  return features;
}

std::vector<std::string> SearchAlgorithmNames() {
  std::vector<std::string> names;
  for (const Entry& entry : kAlgorithms) names.emplace_back(entry.name);
  return names;
}

absl::StatusOr<std::unique_ptr<SearchAlgorithm>> MakeSearch(std::string_view name,
                                                            const Space& space,
                                                            const SearchOptions& options) {
  const Entry* entry =
      std::find_if(std::begin(kAlgorithms), std::end(kAlgorithms),
                   [&](const Entry& e) { return e.name == name; });
  if (entry == std::end(kAlgorithms)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown search algorithm '", std::string(name),
                     "'; valid: ", absl::StrJoin(SearchAlgorithmNames(), ", ")));
  }
  if (absl::Status status = ValidateSpace(space); !status.ok()) return status;
  if (absl::Status status = ValidatePoints(space, options.seeds_first, "seeds_first");
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          ValidatePoints(space, options.already_measured, "already_measured");
      !status.ok()) {
    return status;
  }
  if (options.genetic.mutation_rate < 0 || options.genetic.mutation_rate > 1 ||
      options.model.exploration < 0 || options.model.exploration > 1) {
    return absl::InvalidArgumentError("mutation_rate and exploration must lie in [0, 1]");
  }
  if (!(options.genetic.estimate_top >= 0 && options.genetic.estimate_top <= 1)) {
    return absl::InvalidArgumentError("genetic estimate_top must lie in [0, 1]");
  }
  if (!(options.genetic.estimate_fallback >= 0 && options.genetic.estimate_fallback <= 1)) {
    return absl::InvalidArgumentError("genetic estimate_fallback must lie in [0, 1]");
  }
  if (!(options.genetic.selection_power >= 0 && options.genetic.selection_power <= 64)) {
    return absl::InvalidArgumentError("genetic selection_power must lie in [0, 64]");
  }
  if (!(options.model.estimate_gain_power >= 0 && options.model.estimate_gain_power <= 64)) {
    return absl::InvalidArgumentError("model estimate_gain_power must lie in [0, 64]");
  }
  if (options.max_consecutive_rejections == 0) {
    return absl::InvalidArgumentError("max_consecutive_rejections must be positive");
  }
  return entry->make(space, options);
}

}  // namespace mtune::search
