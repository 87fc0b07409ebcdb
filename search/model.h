// Cost-model guided search (see ModelParams in search/search.h).
#ifndef MTUNE_SEARCH_MODEL_H_
#define MTUNE_SEARCH_MODEL_H_

#include <memory>

#include "search/search.h"

namespace mtune::search {

// `options` already validated.
std::unique_ptr<SearchAlgorithm> MakeModelSearch(const Space& space, const SearchOptions& options);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_MODEL_H_
