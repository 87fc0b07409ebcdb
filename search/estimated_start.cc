#include "search/estimated_start.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "search/sampler.h"

namespace mtune::search {

std::vector<double> RelativeEstimates(const std::function<double(const Point&)>& estimate,
                                      std::span<const Point> points) {
  std::vector<double> estimates;
  double best = 0;
  for (const Point& p : points) {
    const double e = estimate(p);
    estimates.push_back(std::isfinite(e) ? e : 0.0);
    best = std::max(best, estimates.back());
  }
  if (best <= 0) return {};
  for (double& e : estimates) e /= best;
  return estimates;
}

namespace {

// Every acceptable point of a space of at most `pool` points, else those of `pool`
// distinct random draws (at most 4 x pool tries).
std::vector<Point> PointsToRate(const Space& space, uint32_t pool, const std::function<bool(const Point&)>& acceptable,
                                std::mt19937_64& rng) {
  std::vector<Point> candidates;
  const uint64_t size = SpaceSize(space);
  if (size <= pool) {
    for (uint64_t i = 0; i < size; ++i)
      if (Point p = PointAtIndex(space, i); acceptable(p)) candidates.push_back(std::move(p));
  } else {
    absl::flat_hash_set<Point> drawn;
    for (uint32_t draws = 0; draws < 4 * pool && candidates.size() < pool; ++draws) {
      Point p(space.knobs.size());
      for (size_t k = 0; k < p.size(); ++k)
        p[k] = static_cast<uint32_t>(UniformBelow(rng, space.knobs[k].options.size()));
      if (drawn.insert(p).second && acceptable(p)) candidates.push_back(std::move(p));
    }
  }
  return candidates;
}

}  // namespace

std::vector<Point> EstimatedStart(const Space& space, const std::function<double(const Point&)>& estimate,
                                  double top, size_t count, uint32_t pool,
                                  const std::function<bool(const Point&)>& acceptable, std::mt19937_64& rng) {
  std::vector<Point> candidates = PointsToRate(space, pool, acceptable, rng);
  const std::vector<double> estimates = RelativeEstimates(estimate, candidates);
  if (estimates.empty()) return {};
  std::vector<Point> chosen;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (estimates[i] >= top) chosen.push_back(std::move(candidates[i]));
  for (size_t i = chosen.size(); i > 1; --i) std::swap(chosen[i - 1], chosen[UniformBelow(rng, i)]);
  chosen.resize(std::min(chosen.size(), count));
  return chosen;
}

std::vector<Point> RankedByEstimate(const Space& space, const std::function<double(const Point&)>& estimate,
                                    uint32_t pool, const std::function<bool(const Point&)>& acceptable,
                                    std::mt19937_64& rng) {
  std::vector<Point> points = PointsToRate(space, pool, acceptable, rng);
  const std::vector<double> estimates = RelativeEstimates(estimate, points);
  if (estimates.empty()) return {};
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[UniformBelow(rng, i)]);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return estimates[a] > estimates[b]; });
  std::vector<Point> ranked;
  ranked.reserve(order.size());
  for (size_t i : order) ranked.push_back(std::move(points[i]));
  return ranked;
}

}  // namespace mtune::search
