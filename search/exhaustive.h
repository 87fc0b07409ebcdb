// Exhaustive search: every point of the space, in mixed-radix (lexicographic) order.
#ifndef MTUNE_SEARCH_EXHAUSTIVE_H_
#define MTUNE_SEARCH_EXHAUSTIVE_H_

#include <memory>

#include "search/search.h"

namespace mtune::search {

// Enumerates `space` with the last knob varying fastest; `options` already validated.
std::unique_ptr<SearchAlgorithm> MakeExhaustiveSearch(const Space& space,
                                                      const SearchOptions& options);

}  // namespace mtune::search

#endif  // MTUNE_SEARCH_EXHAUSTIVE_H_
