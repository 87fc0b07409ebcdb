// Seeded random draws shared by the randomised algorithms. Hand-rolled rather than
// std::uniform_*_distribution, whose algorithms differ between standard libraries:
// a job's seed must replay the same proposals anywhere.
#ifndef MTUNE_SEARCH_SAMPLER_H_
#define MTUNE_SEARCH_SAMPLER_H_

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "search/space.h"

namespace mtune::search {

// Uniform in [0, bound); bound > 0.
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t bound);

// Uniform in [0, 1).
double UniformUnit(std::mt19937_64& rng);

// Draws points of a space uniformly. Spaces up to `shuffle_limit` points come out as
// a lazily drawn permutation (each point once, then nullopt); larger spaces are
// sampled independently per knob (repeats possible, never nullopt).
class RandomSampler {
 public:
  RandomSampler(const Space& space, uint64_t seed, uint64_t shuffle_limit = uint64_t{1} << 20);

  std::optional<Point> Next();
  // Whether Next() walks a permutation (and so ends).
  bool permutes() const { return permutes_; }
  std::mt19937_64& rng() { return rng_; }

 private:
  const Space* space_;
  std::mt19937_64 rng_;
  bool permutes_;
  std::vector<uint32_t> order_;
  uint64_t drawn_ = 0;
};

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_SAMPLER_H_
