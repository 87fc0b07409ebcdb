// Statistics for search replays (mtune-bench-search): the exact distribution of
// random search's trials to a goal, and bootstrap intervals of medians over seeds.
// Twenty seeds leave a median of trials wide open (random search on the 512^3 table:
// 22 with seeds 100-119, 58 with seeds 0-19), so a ratio of two sampled medians can
// land on either side of a goal by chance; these say how far.
#ifndef MTUNE_BENCH_REPLAY_STATS_H_
#define MTUNE_BENCH_REPLAY_STATS_H_

#include <cstdint>
#include <vector>

namespace mtune::bench {

// Probability that `draws` uniform draws without replacement from `candidates`, of
// which `good` reach the goal, have drawn none of them (1 when draws is 0).
double RandomMissProbability(uint64_t candidates, uint64_t good, uint64_t draws);

// The `q` quantile of random search's trials to its first good candidate: the fewest
// draws that find one with probability at least q (0 < q <= 1). Random search in
// mtune draws valid candidates uniformly without replacement whatever it has seen,
// so this is its exact distribution; candidates + 1 when good is 0.
uint64_t RandomTrialsQuantile(uint64_t candidates, uint64_t good, double q);

// Median of `values` (mean of the middle two for an even count); NaN when empty.
double Median(std::vector<double> values);

struct Interval {
  double low = 0;
  double high = 0;
};

// Percentile bootstrap of the median of `values`: the central `level` share of the
// medians of `resamples` resamples with replacement, drawn from `seed` (the same
// values and seed give the same interval).
Interval BootstrapMedianInterval(const std::vector<double>& values, double level, uint32_t resamples,
                                 uint64_t seed);

}  // namespace mtune::bench

#endif  // MTUNE_BENCH_REPLAY_STATS_H_
