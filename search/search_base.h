// Shared bookkeeping of every search algorithm: seeds first, constraint pruning,
// never-twice, resuming, best-so-far. Algorithms only supply an order of points.
#ifndef MTUNE_SEARCH_SEARCH_BASE_H_
#define MTUNE_SEARCH_SEARCH_BASE_H_

#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "search/search.h"

namespace mtune::search {

// Base of the concrete algorithms; not part of the public API (use MakeSearch).
class SearchBase : public SearchAlgorithm {
 public:
  // `options` points must already be validated against `space`.
  SearchBase(std::string name, const Space& space, const SearchOptions& options);

  std::vector<Point> Propose(size_t n) final;
  void Observe(std::span<const Observation> results) override;
  std::optional<Observation> Best() const final { return best_; }
  std::string_view name() const final { return name_; }

 protected:
  // The algorithm's next point in its own order, repeats allowed; nullopt when its
  // order is finished. Filtering happens in the base.
  virtual std::optional<Point> NextCandidate() = 0;

  // Whether to stop after `consecutive` rejected candidates in a row; orders that
  // never end (random sampling) must eventually say yes.
  virtual bool GiveUp(uint64_t /*consecutive*/) const { return false; }

  const Space& space() const { return space_; }

  // Unseen and valid: worth proposing.
  bool Acceptable(const Point& point) const;
  // Proposed before, measured before, or observed.
  bool Seen(const Point& point) const { return seen_.contains(point); }

 private:
  const std::string name_;
  const Space space_;
  const std::function<bool(const Point&)> is_valid_;
  std::vector<Point> seeds_;
  size_t next_seed_ = 0;
  // Proposed, already measured, or observed: never proposed again.
  absl::flat_hash_set<Point> seen_;
  bool spent_ = false;
  std::optional<Observation> best_;
};

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_SEARCH_BASE_H_
