// Timing of a kernel: warm-up, then repetitions until a minimum total time.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

#include "proto/mtune.pb.h"

namespace mtune::worker {

// Seconds on the steady clock since `start`.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct TimingOptions {
  // Untimed calls first (caches, page faults, branch predictors).
  int warmup = 2;
  // Keep timing until the timed calls add up to this many seconds...
  double min_total_s = 0.1;
  // ...and at least this many calls...
  int min_repetitions = 5;
  // ...but never more than this many.
  int max_repetitions = 100000;
  // A call shorter than this is timed in batches of back-to-back calls that last
  // about this long, each sample a batch's mean: reading the clock costs about 20 ns
  // and it ticks in 10 ns steps on the znver4 host, a visible share of a
  // sub-microsecond call (a 0.28 us kernel's figure moved in 3.5% steps). 0: one call
  // per sample.
  double min_sample_s = 20e-6;
};

// Median, quartiles, min and coefficient of variation of `samples` (seconds), each
// one call (repetitions = the number of samples, calls_per_sample = 1).
mtune::v1::Timing Summarize(std::vector<double> samples, int warmup);

// Calls timed together per sample for a call of `per_call_s`: 1 when it lasts
// min_sample_s or more (or min_sample_s <= 0), else enough to last about min_sample_s,
// at most a tenth of max_repetitions.
size_t CallsPerSample(double per_call_s, double min_sample_s, size_t max_repetitions);

// Untimed calls that TimeCalls makes after the warm-up to choose CallsPerSample
// (when min_sample_s > 0).
inline constexpr int kProbeCalls = 4;

// Times `call` as `options` say and summarizes the timed samples. The repetition
// bounds count calls; min_repetitions counts samples.
mtune::v1::Timing TimeCalls(const std::function<void()>& call, const TimingOptions& options);

// Times each of `calls` in turn, each with its own warm-up and a 1/N share of the
// minimum time and of the repetition bounds, and summarizes all timed calls together.
// For one kernel on N copies of its operands: each block runs warm on one copy, and
// the median speaks for all of them rather than for one copy's page placement.
mtune::v1::Timing TimeCallsInTurn(const std::vector<std::function<void()>>& calls,
                                  const TimingOptions& options);

}  // namespace mtune::worker
