#include "strategies/memory_geometry.h"

#include <algorithm>
#include <map>

namespace mtune::strategies {

int64_t MostLinesInOneL1Set(std::span<const int64_t> addresses) {
  std::map<int64_t, int64_t> lines_in_set;
  int64_t most = 0;
  for (int64_t address : addresses) most = std::max(most, ++lines_in_set[(address % kL1WayBytes) / kL1LineBytes]);
  return most;
}

}  // namespace mtune::strategies
