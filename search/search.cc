#include "search/search.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "search/exhaustive.h"
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
    {"exhaustive", &MakeExhaustiveSearch},
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
  if (options.max_consecutive_rejections == 0) {
    return absl::InvalidArgumentError("max_consecutive_rejections must be positive");
  }
  return entry->make(space, options);
}

}  // namespace mtune::search
