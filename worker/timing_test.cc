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
  options.min_sample_s = 0;  // one call per sample
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
  options.min_sample_s = 0;  // one call per sample
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

// Spins for `seconds` (a kernel of known length; sleeping would take far longer).
void Spin(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// A call much shorter than min_sample_s is timed in batches lasting about that long,
// each sample being the batch's mean; repetitions still counts calls.
TEST(TimeCalls, TimesShortCallsInBatches) {
  TimingOptions options;
  options.warmup = 1;
  options.min_total_s = 0;
  options.min_repetitions = 5;
  options.min_sample_s = 20e-6;
  int calls = 0;
  auto t = TimeCalls([&] { ++calls; Spin(1e-6); }, options);
  // About 20 calls per sample (fewer when the host stalls a probe call).
  EXPECT_GE(t.calls_per_sample(), 5u);
  EXPECT_LE(t.calls_per_sample(), 21u);
  EXPECT_EQ(t.repetitions(), 5 * t.calls_per_sample());
  // Warm-up, the probe that chose the batch (4 calls), and the timed calls.
  EXPECT_EQ(calls, 1 + 4 + static_cast<int>(t.repetitions()));
  // A sample is one call's share of its batch: at least the spin, not the batch.
  EXPECT_GE(t.min_s(), 1e-6);
  EXPECT_LT(t.median_s(), 10e-6);
}

// A call as long as min_sample_s or longer is timed alone, as is every call with
// batching off.
TEST(TimeCalls, TimesLongCallsOneBySample) {
  TimingOptions options;
  options.warmup = 0;
  options.min_total_s = 0;
  options.min_repetitions = 3;
  options.min_sample_s = 20e-6;
  auto t = TimeCalls([] { Spin(50e-6); }, options);
  EXPECT_EQ(t.calls_per_sample(), 1u);
  EXPECT_EQ(t.repetitions(), 3u);
  EXPECT_GE(t.min_s(), 50e-6);

  options.min_sample_s = 0;
  t = TimeCalls([] {}, options);
  EXPECT_EQ(t.calls_per_sample(), 1u);
  EXPECT_EQ(t.repetitions(), 3u);
}

// The repetition cap counts calls, batched or not, and a batch is at most a tenth of
// it, so a tiny call still yields several samples.
TEST(TimeCalls, TheRepetitionCapCountsCalls) {
  TimingOptions options;
  options.warmup = 0;
  options.min_total_s = 10;  // never reached: the cap ends it
  options.min_repetitions = 1;
  options.max_repetitions = 1000;
  options.min_sample_s = 1;  // would batch far more than the cap
  auto t = TimeCalls([] {}, options);
  EXPECT_EQ(t.calls_per_sample(), 100u);
  EXPECT_EQ(t.repetitions(), 1000u);
}

}  // namespace
}  // namespace mtune::worker
