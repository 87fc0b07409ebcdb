#include "bench/allocation_bound.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace mtune::bench {

std::vector<uint32_t> BestAllocation(const std::vector<std::vector<double>>& curves, uint64_t budget) {
  const size_t n = curves.size();
  uint64_t most = 0;
  for (const auto& c : curves) most += c.empty() ? 0 : c.size() - 1;
  const size_t spend = static_cast<size_t>(std::min(budget, most));
  constexpr double kUnreachable = -std::numeric_limits<double>::infinity();
  // value[i][b]: the best sum over problems 0..i-1 with exactly b trials among them;
  // take[i][b]: the trials problem i-1 gets there.
  std::vector<std::vector<double>> value(n + 1, std::vector<double>(spend + 1, kUnreachable));
  std::vector<std::vector<uint32_t>> take(n + 1, std::vector<uint32_t>(spend + 1, 0));
  value[0][0] = 0;
  for (size_t i = 1; i <= n; ++i) {
    const std::vector<double>& curve = curves[i - 1];
    const size_t longest = curve.empty() ? 0 : curve.size() - 1;
    for (size_t b = 0; b <= spend; ++b)
      for (size_t t = 0; t <= std::min(b, longest); ++t) {
        const double before = value[i - 1][b - t];
        if (before == kUnreachable) continue;
        const double v = before + (curve.empty() ? 0.0 : curve[t]);
        if (v > value[i][b]) value[i][b] = v, take[i][b] = static_cast<uint32_t>(t);
      }
  }
  size_t b = 0;
  for (size_t s = 0; s <= spend; ++s)
    if (value[n][s] > value[n][b]) b = s;  // the fewest trials that reach the best sum
  std::vector<uint32_t> trials(n);
  for (size_t i = n; i >= 1; --i) {
    trials[i - 1] = take[i][b];
    b -= take[i][b];
  }
  return trials;
}

}  // namespace mtune::bench
