// Simulated annealing (see AnnealingParams in search/search.h).
#ifndef MTUNE_SEARCH_ANNEALING_H_
#define MTUNE_SEARCH_ANNEALING_H_

#include <memory>

#include "search/search.h"

namespace mtune::search {

// `options` already validated.
std::unique_ptr<SearchAlgorithm> MakeAnnealingSearch(const Space& space, const SearchOptions& options);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_ANNEALING_H_
