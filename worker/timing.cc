#include "worker/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace mtune::worker {
namespace {

// Linear interpolation between closest ranks, on sorted samples.
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * (sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

}  // namespace

mtune::v1::Timing Summarize(std::vector<double> samples, int warmup) {
  mtune::v1::Timing t;
  t.set_warmup(warmup);
  t.set_repetitions(static_cast<uint32_t>(samples.size()));
  if (samples.empty()) return t;
  std::sort(samples.begin(), samples.end());
  t.set_median_s(Quantile(samples, 0.5));
  t.set_p25_s(Quantile(samples, 0.25));
  t.set_p75_s(Quantile(samples, 0.75));
  t.set_min_s(samples.front());
  double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  double var = 0;
  for (double s : samples) var += (s - mean) * (s - mean);
  var /= samples.size();
  t.set_cv(mean > 0 ? std::sqrt(var) / mean : 0);
  return t;
}

mtune::v1::Timing TimeCalls(const std::function<void()>& call, const TimingOptions& options) {
  return TimeCallsInTurn({call}, options);
}

mtune::v1::Timing TimeCallsInTurn(const std::vector<std::function<void()>>& calls,
                                  const TimingOptions& options) {
  using Clock = std::chrono::steady_clock;
  const int blocks = std::max<int>(1, static_cast<int>(calls.size()));
  const double min_total_s = options.min_total_s / blocks;
  const size_t min_repetitions = static_cast<size_t>((options.min_repetitions + blocks - 1) / blocks);
  const size_t max_repetitions = static_cast<size_t>(std::max(1, options.max_repetitions / blocks));
  std::vector<double> samples;
  for (const std::function<void()>& call : calls) {
    for (int i = 0; i < options.warmup; ++i) call();
    size_t timed = 0;
    double total = 0;
    while (timed < max_repetitions && (total < min_total_s || timed < min_repetitions)) {
      auto start = Clock::now();
      call();
      double s = std::chrono::duration<double>(Clock::now() - start).count();
      samples.push_back(s);
      total += s;
      ++timed;
    }
  }
  return Summarize(std::move(samples), options.warmup * static_cast<int>(calls.size()));
}

}  // namespace mtune::worker
