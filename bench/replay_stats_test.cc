#include "bench/replay_stats.h"

#include <cmath>
#include <map>
#include <set>

#include "gtest/gtest.h"
#include "search/search.h"

namespace mtune::bench {
namespace {

TEST(RandomTrials, SmallCasesByHand) {
  // One good candidate of four: found at each draw with probability 1/4.
  EXPECT_DOUBLE_EQ(RandomMissProbability(4, 1, 0), 1.0);
  EXPECT_DOUBLE_EQ(RandomMissProbability(4, 1, 1), 0.75);
  EXPECT_DOUBLE_EQ(RandomMissProbability(4, 1, 2), 0.5);
  EXPECT_DOUBLE_EQ(RandomMissProbability(4, 1, 4), 0.0);
  EXPECT_EQ(RandomTrialsQuantile(4, 1, 0.5), 2u);
  EXPECT_EQ(RandomTrialsQuantile(4, 1, 1.0), 4u);
  // Two of four: the first draw misses with probability 1/2.
  EXPECT_EQ(RandomTrialsQuantile(4, 2, 0.5), 1u);
  EXPECT_EQ(RandomTrialsQuantile(4, 2, 0.6), 2u);
  EXPECT_EQ(RandomTrialsQuantile(10, 10, 0.5), 1u);
  EXPECT_EQ(RandomTrialsQuantile(10, 0, 0.5), 11u);
}

// The formula is only worth printing if it is what mtune's random search does:
// replay it over many seeds on a space with constraints and compare.
TEST(RandomTrials, MatchesMtuneRandomSearch) {
  search::Space space{{{"a", {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"}},
                       {"b", {"x", "y", "z", "w", "v", "u", "t", "s", "r", "q"}}}};
  // 120 points, a third rejected by a "constraint", 4 of the rest good.
  auto valid = [](const search::Point& p) { return (p[0] + p[1]) % 3 != 0; };
  const std::set<search::Point> good = {{1, 0}, {5, 6}, {10, 9}, {11, 2}};
  uint64_t candidates = 0;
  for (uint32_t a = 0; a < 12; ++a)
    for (uint32_t b = 0; b < 10; ++b) candidates += valid({a, b});
  for (const auto& g : good) ASSERT_TRUE(valid(g));
  std::map<uint64_t, int> first_good;  // trials -> seeds
  const int seeds = 4000;
  for (int seed = 0; seed < seeds; ++seed) {
    search::SearchOptions options;
    options.seed = seed;
    options.is_valid = valid;
    auto random = search::MakeSearch("random", space, options);
    ASSERT_TRUE(random.ok());
    for (uint64_t t = 1;; ++t) {
      const auto points = (*random)->Propose(1);
      ASSERT_EQ(points.size(), 1u);
      if (good.contains(points[0])) {
        ++first_good[t];
        break;
      }
      (*random)->Observe({{{points[0], true, 1.0}}});
    }
  }
  // Cumulative shares against 1 - miss probability: within 3 standard errors.
  int found = 0;
  for (uint64_t t = 1; t <= 30; ++t) {
    found += first_good[t];
    const double expected = 1.0 - RandomMissProbability(candidates, good.size(), t);
    const double se = std::sqrt(expected * (1 - expected) / seeds);
    EXPECT_NEAR(static_cast<double>(found) / seeds, expected, 3 * se + 1e-9) << "after " << t << " trials";
  }
  // And the median itself.
  int below = 0;
  uint64_t empirical_median = 0;
  for (const auto& [t, n] : first_good) {
    below += n;
    if (2 * below >= seeds) {
      empirical_median = t;
      break;
    }
  }
  const uint64_t exact = RandomTrialsQuantile(candidates, good.size(), 0.5);
  EXPECT_NEAR(static_cast<double>(empirical_median), static_cast<double>(exact), 1.0);
}

TEST(Median, OddEvenEmpty) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(Median({})));
}

TEST(Bootstrap, IntervalBracketsTheMedianAndNarrowsWithMoreSeeds) {
  std::vector<double> few, many;
  for (int i = 0; i < 20; ++i) few.push_back(1 + (i * 7) % 40);
  for (int i = 0; i < 400; ++i) many.push_back(1 + (i * 7) % 40);
  const Interval a = BootstrapMedianInterval(few, 0.9, 2000, 1);
  const Interval b = BootstrapMedianInterval(many, 0.9, 2000, 1);
  EXPECT_LE(a.low, Median(few));
  EXPECT_GE(a.high, Median(few));
  EXPECT_LT(b.high - b.low, a.high - a.low);
  // Deterministic for a seed; a constant sample has a point interval.
  const Interval again = BootstrapMedianInterval(few, 0.9, 2000, 1);
  EXPECT_EQ(a.low, again.low);
  EXPECT_EQ(a.high, again.high);
  const Interval flat = BootstrapMedianInterval({5, 5, 5}, 0.9, 100, 3);
  EXPECT_EQ(flat.low, 5);
  EXPECT_EQ(flat.high, 5);
}

}  // namespace
}  // namespace mtune::bench
