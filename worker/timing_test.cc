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

TEST(CallsPerSample, BatchesCallsShorterThanASample) {
  // 1 us calls, 20 us samples: 20 calls each; a 50 us call alone.
  EXPECT_EQ(CallsPerSample(1e-6, 20e-6, 100000), 20u);
  EXPECT_EQ(CallsPerSample(0.3e-6, 20e-6, 100000), 67u);
  EXPECT_EQ(CallsPerSample(50e-6, 20e-6, 100000), 1u);
  EXPECT_EQ(CallsPerSample(20e-6, 20e-6, 100000), 1u);
  // Batching off.
  EXPECT_EQ(CallsPerSample(1e-6, 0, 100000), 1u);
  // At most a tenth of the repetition cap, so that there are still several samples.
  EXPECT_EQ(CallsPerSample(0, 20e-6, 1000), 100u);
  EXPECT_EQ(CallsPerSample(1e-9, 1, 5), 1u);
}

TimingOptions Untimed(int warmup, int min_repetitions, double min_sample_s) {
  TimingOptions options;
  options.warmup = warmup;
  options.min_total_s = 0;
  options.min_repetitions = min_repetitions;
  options.min_sample_s = min_sample_s;
  return options;
}

// Samples of a short call are batch means: each at least the call's own length,
// repetitions counting calls (samples x calls per sample), and the probe's calls
// made once. How many calls a batch gets depends on the probe's timing, so only
// what holds whatever it measured is checked here.
TEST(TimeCalls, TimesShortCallsInBatches) {
  int calls = 0;
  auto t = TimeCalls([&] { ++calls; Spin(1e-6); }, Untimed(1, 5, 20e-6));
  EXPECT_GE(t.calls_per_sample(), 1u);
  EXPECT_LE(t.calls_per_sample(), 20u) << "a call of 1 us or more never needs more";
  EXPECT_EQ(t.repetitions(), 5 * t.calls_per_sample()) << "5 samples";
  EXPECT_EQ(calls, 1 + kProbeCalls + static_cast<int>(t.repetitions()));
  EXPECT_GE(t.min_s(), 1e-6);
}

// A long call is timed alone, as is every call with batching off (no probe calls).
TEST(TimeCalls, TimesLongCallsOneBySample) {
  auto t = TimeCalls([] { Spin(50e-6); }, Untimed(0, 3, 20e-6));
  EXPECT_EQ(t.calls_per_sample(), 1u);
  EXPECT_EQ(t.repetitions(), 3u);
  EXPECT_GE(t.min_s(), 50e-6);

  int calls = 0;
  t = TimeCalls([&] { ++calls; }, Untimed(0, 3, 0));
  EXPECT_EQ(t.calls_per_sample(), 1u);
  EXPECT_EQ(t.repetitions(), 3u);
  EXPECT_EQ(calls, 3);
}

// The repetition cap counts calls, batched or not.
TEST(TimeCalls, TheRepetitionCapCountsCalls) {
  TimingOptions options = Untimed(0, 1, 1);  // would batch far more than the cap
  options.min_total_s = 10;                   // never reached: the cap ends it
  options.max_repetitions = 1000;
  auto t = TimeCalls([] {}, options);
  EXPECT_EQ(t.calls_per_sample(), 100u);
  EXPECT_EQ(t.repetitions(), 1000u);
}

}  // namespace
}  // namespace mtune::worker
