#include "search/sampler.h"

#include <utility>

namespace mtune::search {

uint64_t UniformBelow(std::mt19937_64& rng, uint64_t bound) {
  // Rejecting the first (2^64 mod bound) values removes the modulo bias.
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

double UniformUnit(std::mt19937_64& rng) {
  // 53 random bits: every double in [0, 1) on a 2^-53 grid, identically everywhere.
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

RandomSampler::RandomSampler(const Space& space, uint64_t seed, uint64_t shuffle_limit)
    : space_(&space), rng_(seed), permutes_(SpaceSize(space) <= shuffle_limit) {
  if (permutes_) {
    const uint64_t size = SpaceSize(space);
    order_.resize(size);
    for (uint64_t i = 0; i < size; ++i) order_[i] = static_cast<uint32_t>(i);
  }
}

std::optional<Point> RandomSampler::Next() {
  if (permutes_) {
    // One Fisher-Yates step per draw: a short budget does not pay for the whole
    // permutation's randomness.
    if (drawn_ == order_.size()) return std::nullopt;
    const uint64_t pick = drawn_ + UniformBelow(rng_, order_.size() - drawn_);
    std::swap(order_[drawn_], order_[pick]);
    return PointAtIndex(*space_, order_[drawn_++]);
  }
  Point point(space_->knobs.size());
  for (size_t i = 0; i < point.size(); ++i)
    point[i] = static_cast<uint32_t>(UniformBelow(rng_, space_->knobs[i].options.size()));
  return point;
}

}  // namespace mtune::search
