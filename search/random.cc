#include "search/random.h"

#include <random>
#include <utility>

#include "search/search_base.h"

namespace mtune::search {
namespace {

// Uniform in [0, bound). Hand-rolled rather than std::uniform_int_distribution, whose
// algorithm differs between standard libraries: a job's seed must replay anywhere.
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t bound) {
  // Rejecting the first (2^64 mod bound) values removes the modulo bias.
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t r = rng();
    if (r >= threshold) return r % bound;
  }
}

// Small spaces: a Fisher-Yates shuffle of all indices, drawn lazily one step per
// candidate so a short budget does not pay for the whole permutation's randomness.
class ShuffledSearch final : public SearchBase {
 public:
  ShuffledSearch(const Space& space, const SearchOptions& options)
      : SearchBase("random", space, options), rng_(options.seed) {
    const uint64_t size = SpaceSize(space);
    order_.resize(size);
    for (uint64_t i = 0; i < size; ++i) order_[i] = static_cast<uint32_t>(i);
  }

 protected:
  std::optional<Point> NextCandidate() override {
    if (drawn_ == order_.size()) return std::nullopt;
    const uint64_t pick = drawn_ + UniformBelow(rng_, order_.size() - drawn_);
    std::swap(order_[drawn_], order_[pick]);
    return PointAtIndex(space(), order_[drawn_++]);
  }

 private:
  std::mt19937_64 rng_;
  std::vector<uint32_t> order_;
  uint64_t drawn_ = 0;
};

// Large spaces: independent uniform draws per knob (uniform over the product); the
// base rejects repeats, and gives up after a long run of rejections because then
// almost everything valid has been drawn (or nothing valid is left to find).
class SampledSearch final : public SearchBase {
 public:
  SampledSearch(const Space& space, const SearchOptions& options)
      : SearchBase("random", space, options),
        rng_(options.seed),
        max_rejections_(options.max_consecutive_rejections) {}

 protected:
  std::optional<Point> NextCandidate() override {
    Point point(space().knobs.size());
    for (size_t i = 0; i < point.size(); ++i) {
      point[i] = static_cast<uint32_t>(UniformBelow(rng_, space().knobs[i].options.size()));
    }
    return point;
  }

  bool GiveUp(uint64_t consecutive) const override { return consecutive >= max_rejections_; }

 private:
  std::mt19937_64 rng_;
  const uint64_t max_rejections_;
};

}  // namespace

std::unique_ptr<SearchAlgorithm> MakeRandomSearch(const Space& space,
                                                  const SearchOptions& options) {
  if (SpaceSize(space) <= kRandomShuffleLimit) {
    return std::make_unique<ShuffledSearch>(space, options);
  }
  return std::make_unique<SampledSearch>(space, options);
}

}  // namespace mtune::search
