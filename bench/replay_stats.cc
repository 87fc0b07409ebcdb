#include "bench/replay_stats.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace mtune::bench {

double RandomMissProbability(uint64_t candidates, uint64_t good, uint64_t draws) {
  if (good == 0) return 1.0;
  if (good >= candidates || draws > candidates - good) return draws == 0 ? 1.0 : 0.0;
  // P(miss after t) = prod_{i < t} (n - k - i) / (n - i).
  double miss = 1.0;
  for (uint64_t i = 0; i < draws; ++i)
    miss *= static_cast<double>(candidates - good - i) / static_cast<double>(candidates - i);
  return miss;
}

uint64_t RandomTrialsQuantile(uint64_t candidates, uint64_t good, double q) {
  if (good == 0 || good > candidates) return candidates + 1;
  // The same product as RandomMissProbability, kept running (calling it per t would
  // be quadratic in the candidates).
  double miss = 1.0;
  for (uint64_t t = 1; t <= candidates - good + 1; ++t) {
    miss *= static_cast<double>(candidates - good - (t - 1)) / static_cast<double>(candidates - (t - 1));
    // A small tolerance so that a quantile landing exactly on a step is not lost
    // to rounding in the running product.
    if (1.0 - miss >= q - 1e-12) return t;
  }
  return candidates - good + 1;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n == 0) return NAN;
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

Interval BootstrapMedianInterval(const std::vector<double>& values, double level, uint32_t resamples,
                                 uint64_t seed) {
  if (values.empty() || resamples == 0) return {NAN, NAN};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
  std::vector<double> medians;
  medians.reserve(resamples);
  std::vector<double> resample(values.size());
  for (uint32_t r = 0; r < resamples; ++r) {
    for (double& v : resample) v = values[pick(rng)];
    medians.push_back(Median(resample));
  }
  std::sort(medians.begin(), medians.end());
  const double tail = (1.0 - level) / 2;
  const auto at = [&](double share) {
    const size_t i = std::min(medians.size() - 1, static_cast<size_t>(std::floor(share * medians.size())));
    return medians[i];
  };
  return {at(tail), at(1.0 - tail)};
}

}  // namespace mtune::bench
