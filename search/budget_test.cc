#include "search/budget.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::search {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(Budget, TrialsRunOut) {
  Budget budget({.trials = 3}, 0);
  EXPECT_EQ(budget.TrialsLeft(), 3u);
  budget.Record(true, 1);
  budget.Record(false, 0);
  EXPECT_THAT(budget.Exhausted(1e9), IsEmpty());
  budget.Record(true, 2);
  EXPECT_THAT(budget.Exhausted(0), HasSubstr("trial budget of 3"));
  EXPECT_EQ(budget.TrialsLeft(), 0u);
}

TEST(Budget, TimeRunsOut) {
  Budget budget({.time_s = 600}, 100);
  EXPECT_THAT(budget.Exhausted(699.9), IsEmpty());
  EXPECT_THAT(budget.Exhausted(700), HasSubstr("time budget of 600 s"));
  EXPECT_EQ(budget.TrialsLeft(), UINT64_MAX);
}

TEST(Budget, PatienceCountsTrialsWithoutARealImprovement) {
  Budget budget({.patience = 3, .min_improvement = 0.01}, 0);
  budget.Record(false, 0);  // a failure before any success counts too
  budget.Record(true, 100);
  EXPECT_EQ(budget.since_improvement(), 0u);
  budget.Record(true, 100.5);  // within noise: not an improvement
  budget.Record(false, 0);
  EXPECT_THAT(budget.Exhausted(0), IsEmpty());
  budget.Record(true, 101.4);  // 0.9% above 100.5: still noise
  EXPECT_THAT(budget.Exhausted(0), HasSubstr("no improvement in 3 trials"));
}

TEST(Budget, ImprovementResetsPatience) {
  Budget budget({.patience = 2}, 0);
  budget.Record(true, 10);
  budget.Record(true, 5);
  budget.Record(true, 20);
  budget.Record(true, 5);
  EXPECT_THAT(budget.Exhausted(0), IsEmpty());
  budget.Record(true, 5);
  EXPECT_THAT(budget.Exhausted(0), HasSubstr("no improvement"));
}

TEST(Budget, NoLimitsNeverEnd) {
  Budget budget({}, 0);
  for (int i = 0; i < 1000; ++i) budget.Record(true, 1);
  EXPECT_THAT(budget.Exhausted(1e12), IsEmpty());
}

TEST(ParseDuration, Forms) {
  EXPECT_EQ(*ParseDuration("90"), 90);
  EXPECT_EQ(*ParseDuration("90s"), 90);
  EXPECT_EQ(*ParseDuration("10m"), 600);
  EXPECT_EQ(*ParseDuration("1h30m"), 5400);
  EXPECT_EQ(*ParseDuration("1.5h"), 5400);
  for (const char* bad : {"", "ten", "10x", "-5m", "5m-", "m"})
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
}

}  // namespace
}  // namespace mtune::search
