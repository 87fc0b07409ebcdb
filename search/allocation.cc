#include "search/allocation.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace mtune::search {

double ExpectedGain(std::span<const double> scores, uint32_t proposed, uint64_t job_trials) {
  if (proposed < kGainWarmupTrials) return 1e9 - proposed;
  double best = 0, best_before = 0;
  const size_t recent = std::max<size_t>(8, scores.size() / 2);
  for (size_t i = 0; i < scores.size(); ++i) {
    best = std::max(best, scores[i]);
    if (i + recent < scores.size()) best_before = best;
  }
  const double improvement = best > 0 ? (best - best_before) / best : 0.0;
  return improvement + 0.1 * std::sqrt(std::log(double(job_trials) + 1) / double(proposed));
}

}  // namespace mtune::search
