#include "bench/allocation_bound.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace mtune::bench {
namespace {

// A problem that reaches its best at once and one that keeps rising: the trials go
// where the curve still rises, not half and half.
TEST(BestAllocation, SpendsWhereTheCurveStillRises) {
  const std::vector<std::vector<double>> curves = {{0, 1.0, 1.0, 1.0, 1.0}, {0, 0.2, 0.4, 0.6, 0.8}};
  EXPECT_EQ(BestAllocation(curves, 5), (std::vector<uint32_t>{1, 4}));
  EXPECT_EQ(BestAllocation(curves, 2), (std::vector<uint32_t>{1, 1}));
}

// A curve that jumps late is worth its whole wait only when the budget reaches it.
TEST(BestAllocation, ALateJumpIsTakenOnlyWhenReachable) {
  const std::vector<std::vector<double>> curves = {{0, 0.5, 0.6, 0.7}, {0, 0.5, 0.5, 1.0}};
  EXPECT_EQ(BestAllocation(curves, 3), (std::vector<uint32_t>{2, 1}));  // 0.6 + 0.5 = 1.1 over 0.5 + 0.5
  EXPECT_EQ(BestAllocation(curves, 4), (std::vector<uint32_t>{1, 3}));  // 0.5 + 1.0
}

// More budget than the curves hold: each problem gets no more than its curve spans,
// and trials that add nothing are not spent.
TEST(BestAllocation, NeverMoreThanACurveSpans) {
  const std::vector<std::vector<double>> curves = {{0, 0.9, 0.9}, {0, 0.3, 1.0}};
  EXPECT_EQ(BestAllocation(curves, 100), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(BestAllocation({}, 10), std::vector<uint32_t>{});
}

}  // namespace
}  // namespace mtune::bench
