// The start `model` and `genetic` take from a first-principles estimate of each
// point's speed (SearchOptions::estimate) before anything is measured: points drawn
// at random from those the estimate rates best, not from the whole space.
#ifndef MTUNE_SEARCH_ESTIMATED_START_H_
#define MTUNE_SEARCH_ESTIMATED_START_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "search/space.h"

namespace mtune::search {

// Each point's estimate over the best among `points` (none, NaN or not positive: 0);
// empty when no point has a positive estimate.
std::vector<double> RelativeEstimates(const std::function<double(const Point&)>& estimate,
                                      std::span<const Point> points);

// Up to `count` points, in random order, among the `acceptable` points whose estimate
// is at least `top` of the best estimate among them: every acceptable point of a space
// of at most `pool` points, else those of `pool` distinct random draws (at most
// 4 x pool tries). Fewer when fewer qualify (none when no point has an estimate): the
// caller's random sampler fills in.
std::vector<Point> EstimatedStart(const Space& space, const std::function<double(const Point&)>& estimate,
                                  double top, size_t count, uint32_t pool,
                                  const std::function<bool(const Point&)>& acceptable, std::mt19937_64& rng);

// The `acceptable` points (all of a space of at most `pool` points, else those of
// `pool` distinct random draws) from the best estimate down, ties in random order;
// empty when no point has a positive estimate.
std::vector<Point> RankedByEstimate(const Space& space, const std::function<double(const Point&)>& estimate,
                                    uint32_t pool, const std::function<bool(const Point&)>& acceptable,
                                    std::mt19937_64& rng);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_ESTIMATED_START_H_
