#include "worker/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

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

// Each call gets its own warm-up and its share of the repetitions, in turn, and the
// summary covers every timed call.
TEST(TimeCallsInTurn, WarmsUpAndTimesEachCallInItsOwnBlock) {
  std::vector<int> order;
  TimingOptions options;
  options.warmup = 2;
  options.min_total_s = 0;
  options.min_repetitions = 7;
  std::vector<std::function<void()>> calls;
  for (int set = 0; set < 3; ++set) calls.push_back([&order, set] { order.push_back(set); });
  auto t = TimeCallsInTurn(calls, options);
  // ceil(7 / 3) = 3 timed calls per set, after 2 warm-up calls each.
  EXPECT_EQ(order, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2}));
  EXPECT_EQ(t.repetitions(), 9u);
  EXPECT_EQ(t.warmup(), 6u);

  // The minimum time is shared too: a slow call is not repeated past its share.
  options.min_repetitions = 1;
  options.min_total_s = 0.03;
  options.warmup = 0;
  order.clear();
  calls = {[&] { order.push_back(0); std::this_thread::sleep_for(std::chrono::milliseconds(20)); },
           [&] { order.push_back(1); }};
  TimeCallsInTurn(calls, options);
  EXPECT_EQ(std::count(order.begin(), order.end(), 0), 1);
  EXPECT_GT(std::count(order.begin(), order.end(), 1), 1);
}

}  // namespace
}  // namespace mtune::worker
