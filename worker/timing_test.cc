#include "worker/timing.h"

#include <cmath>

#include "gtest/gtest.h"

namespace mtune::worker {
namespace {

TEST(Summarize, QuantilesAndSpread) {
  auto t = Summarize({5, 1, 4, 2, 3}, 2);
  EXPECT_DOUBLE_EQ(t.median_s(), 3);
  EXPECT_DOUBLE_EQ(t.p25_s(), 2);
  EXPECT_DOUBLE_EQ(t.p75_s(), 4);
  EXPECT_DOUBLE_EQ(t.min_s(), 1);
  EXPECT_EQ(t.repetitions(), 5u);
  EXPECT_EQ(t.warmup(), 2u);
  EXPECT_NEAR(t.cv(), std::sqrt(2.0) / 3, 1e-12);
}

TEST(TimeCalls, HonoursMinimumRepetitionsAndWarmup) {
  int calls = 0;
  TimingOptions options;
  options.warmup = 3;
  options.min_total_s = 0;
  options.min_repetitions = 7;
  auto t = TimeCalls([&] { ++calls; }, options);
  EXPECT_EQ(calls, 10);
  EXPECT_EQ(t.repetitions(), 7u);
}

}  // namespace
}  // namespace mtune::worker
