#include "search/search_base.h"

#include <cmath>
#include <utility>

namespace mtune::search {

SearchBase::SearchBase(std::string name, const Space& space, const SearchOptions& options)
    : name_(std::move(name)),
      space_(space),
      is_valid_(options.is_valid),
      seeds_(options.seeds_first),
      seen_(options.already_measured.begin(), options.already_measured.end()) {}

bool SearchBase::Acceptable(const Point& point) const {
  return !seen_.contains(point) && (!is_valid_ || is_valid_(point));
}

std::vector<Point> SearchBase::Propose(size_t n) {
  std::vector<Point> batch;
  while (batch.size() < n && next_seed_ < seeds_.size()) {
    Point& seed = seeds_[next_seed_++];
    if (Acceptable(seed)) {
      seen_.insert(seed);
      batch.push_back(std::move(seed));
    }
  }
  uint64_t rejected_in_a_row = 0;
  while (batch.size() < n && !spent_) {
    std::optional<Point> candidate = NextCandidate();
    if (!candidate) {
      spent_ = true;
    } else if (Acceptable(*candidate)) {
      rejected_in_a_row = 0;
      seen_.insert(*candidate);
      batch.push_back(std::move(*candidate));
    } else if (GiveUp(++rejected_in_a_row)) {
      spent_ = true;
    }
  }
  return batch;
}

void SearchBase::Observe(std::span<const Observation> results) {
  for (const Observation& result : results) {
    // Points from another space cannot be proposed anyway; keep them out of `best_`.
    if (!ValidatePoint(space_, result.point).ok()) continue;
    seen_.insert(result.point);
    if (!result.ok || !std::isfinite(result.score)) continue;
    if (!best_ || result.score > best_->score) best_ = result;
  }
}

}  // namespace mtune::search
