// Random search: seeded, uniform, without replacement.
#ifndef MTUNE_SEARCH_RANDOM_H_
#define MTUNE_SEARCH_RANDOM_H_

#include <cstdint>
#include <memory>

#include "search/search.h"

namespace mtune::search {

// Spaces up to this many points are shuffled as a whole; larger ones are sampled.
inline constexpr uint64_t kRandomShuffleLimit = uint64_t{1} << 20;

// Proposes points of `space` in a seeded random order; `options` already validated.
std::unique_ptr<SearchAlgorithm> MakeRandomSearch(const Space& space,
                                                  const SearchOptions& options);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_RANDOM_H_
