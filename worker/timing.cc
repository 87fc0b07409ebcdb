#include "worker/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace mtune::worker {
namespace {

using Clock = std::chrono::steady_clock;

// Linear interpolation between closest ranks, on sorted samples.
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * (sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

// Calls per sample for `call` (warm already), from the mean of kProbeCalls calls
// whose times are not kept.
size_t ProbeCallsPerSample(const std::function<void()>& call, double min_sample_s, size_t max_repetitions) {
  if (min_sample_s <= 0) return 1;
  auto start = Clock::now();
  for (int i = 0; i < kProbeCalls; ++i) call();
  const double per_call = std::chrono::duration<double>(Clock::now() - start).count() / kProbeCalls;
  return CallsPerSample(per_call, min_sample_s, max_repetitions);
}

}  // namespace

size_t CallsPerSample(double per_call_s, double min_sample_s, size_t max_repetitions) {
  if (min_sample_s <= 0 || per_call_s >= min_sample_s) return 1;
  // (Less a hair: 20e-6 / 1e-6 is 20.000000000000004 in doubles.)
  const double wanted = std::ceil(min_sample_s / std::max(per_call_s, 1e-9) - 1e-9);
  // At most a tenth of the repetition cap per sample, so that a block still has samples.
  return static_cast<size_t>(std::clamp(wanted, 1.0, std::max(1.0, std::floor(max_repetitions / 10.0))));
}

mtune::v1::Timing Summarize(std::vector<double> samples, int warmup) {
  mtune::v1::Timing t;
  t.set_warmup(warmup);
  t.set_repetitions(static_cast<uint32_t>(samples.size()));
  t.set_calls_per_sample(1);
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
  const int blocks = std::max<int>(1, static_cast<int>(calls.size()));
  const double min_total_s = options.min_total_s / blocks;
  const size_t min_repetitions = static_cast<size_t>((options.min_repetitions + blocks - 1) / blocks);
  const size_t max_repetitions = static_cast<size_t>(std::max(1, options.max_repetitions / blocks));
  std::vector<double> samples;
  // Calls per sample, chosen once (after the first block's warm-up) for every block.
  size_t batch = 0;
  size_t calls_timed = 0;
  for (const std::function<void()>& call : calls) {
    for (int i = 0; i < options.warmup; ++i) call();
    if (batch == 0) batch = ProbeCallsPerSample(call, options.min_sample_s, max_repetitions);
    size_t timed = 0, block_samples = 0;
    double total = 0;
    while (timed + batch <= max_repetitions && (total < min_total_s || block_samples < min_repetitions)) {
      auto start = Clock::now();
      for (size_t i = 0; i < batch; ++i) call();
      double s = std::chrono::duration<double>(Clock::now() - start).count();
      samples.push_back(s / batch);
      total += s;
      timed += batch;
      ++block_samples;
    }
    calls_timed += timed;
  }
  mtune::v1::Timing t = Summarize(std::move(samples), options.warmup * static_cast<int>(calls.size()));
  t.set_repetitions(static_cast<uint32_t>(calls_timed));
  t.set_calls_per_sample(static_cast<uint32_t>(batch));
  return t;
}

}  // namespace mtune::worker
