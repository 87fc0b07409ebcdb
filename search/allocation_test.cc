#include "search/allocation.h"

#include <vector>

#include "gtest/gtest.h"

namespace mtune::search {
namespace {

TEST(ExpectedGain, ProblemsWarmingUpComeFirstFewestProposalsFirst) {
  const std::vector<double> none;
  const std::vector<double> rising = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_GT(ExpectedGain(none, 0, 100), ExpectedGain(none, kGainWarmupTrials - 1, 100));
  EXPECT_GT(ExpectedGain(none, kGainWarmupTrials - 1, 100), ExpectedGain(rising, kGainWarmupTrials, 100));
}

// A problem whose best still rises is worth more than one whose best came long ago.
TEST(ExpectedGain, ARisingBestBeatsAStalledOne) {
  std::vector<double> stalled(16, 1.0), rising(16, 1.0);
  stalled[0] = 5;   // its best, 15 results ago
  rising[15] = 5;   // its best, the latest result
  EXPECT_GT(ExpectedGain(rising, 16, 64), ExpectedGain(stalled, 16, 64));
  // Stalled, the gain is the exploration term alone: it shrinks as the problem gets trials.
  EXPECT_GT(ExpectedGain(stalled, 16, 64), ExpectedGain(std::vector<double>(32, 1.0), 32, 64));
}

// Trials that all failed raise nothing: such a problem gains by exploration alone,
// as one whose best is older than its recent results does.
TEST(ExpectedGain, FailedTrialsGainOnlyByExploration) {
  std::vector<double> stalled(16, 1.0);
  stalled[0] = 5;
  EXPECT_DOUBLE_EQ(ExpectedGain(std::vector<double>(16, 0.0), 16, 64), ExpectedGain(stalled, 16, 64));
  EXPECT_GT(ExpectedGain(std::vector<double>(16, 0.0), 16, 64), 0);
}

}  // namespace
}  // namespace mtune::search
