// Search algorithms behind one interface: propose candidates, learn from their results.
#ifndef MTUNE_SEARCH_SEARCH_H_
#define MTUNE_SEARCH_SEARCH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "search/space.h"

namespace mtune::search {

// One measured candidate fed back to the algorithm.
struct Observation {
  Point point;
  // False for any failed candidate (invalid, compile error, wrong result, timeout, crash).
  bool ok = false;
  // Achieved GFLOP/s; higher is better; ignored when !ok.
  double score = 0.0;
};

// Proposes points of one Space in batches; not thread-safe (the caller serialises).
class SearchAlgorithm {
 public:
  virtual ~SearchAlgorithm() = default;

  // Up to n points never returned before; fewer (possibly none) once the space is spent.
  virtual std::vector<Point> Propose(size_t n) = 0;

  // Feeds back results; observed points are never proposed afterwards.
  virtual void Observe(std::span<const Observation> results) = 0;

  // The best OK observation so far (first one wins ties); nullopt before any.
  virtual std::optional<Observation> Best() const = 0;

  // The registry name this algorithm was made under ("exhaustive", "random").
  virtual std::string_view name() const = 0;
};

// How an algorithm is seeded and constrained.
struct SearchOptions {
  // Seed of randomised algorithms; the same seed replays the same proposals.
  uint64_t seed = 0;
  // Constraint check: rejected points are never proposed, so they never cost a compile.
  // Empty = every point is valid.
  std::function<bool(const Point&)> is_valid;
  // Proposed before anything else, in order (e.g. the template's default candidate),
  // unless rejected by is_valid or listed in already_measured.
  std::vector<Point> seeds_first;
  // Points measured by an earlier run (resuming a job); never proposed.
  std::vector<Point> already_measured;
  // Randomised sampling of spaces too large to enumerate gives up (reports the space
  // as spent) after this many consecutive duplicate or invalid draws.
  uint64_t max_consecutive_rejections = 100000;
};

// Names accepted by MakeSearch, sorted.
std::vector<std::string> SearchAlgorithmNames();

// Creates the named algorithm over `space`. InvalidArgument for an unknown name (the
// message lists the valid ones), a malformed space, or a seed/measured point that does
// not fit the space.
absl::StatusOr<std::unique_ptr<SearchAlgorithm>> MakeSearch(std::string_view name,
                                                            const Space& space,
                                                            const SearchOptions& options);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_SEARCH_H_
