#include "worker/overlap_mode.h"

#include "gtest/gtest.h"

namespace mtune::worker {
namespace {

TEST(OverlapMode, DefaultCompilesOnEveryOtherAllowedCore) {
  auto mode = ChooseOverlap(1, false, {}, {0, 1, 2, 3});
  ASSERT_TRUE(mode.ok()) << mode.status();
  EXPECT_EQ(mode->compile_cpus, (std::vector<int>{0, 2, 3}));
  EXPECT_NE(mode->description.find("overlap: compiling upcoming candidates on cpus 0,2,3"),
            std::string::npos);
}

TEST(OverlapMode, OneCoreFallsBackToSequentialAndSaysSo) {
  auto mode = ChooseOverlap(0, false, {}, {0});
  ASSERT_TRUE(mode.ok());
  EXPECT_TRUE(mode->compile_cpus.empty());
  EXPECT_NE(mode->description.find("no spare core"), std::string::npos) << mode->description;
}

TEST(OverlapMode, OffWhenAskedOrUnpinned) {
  EXPECT_TRUE(ChooseOverlap(0, true, {}, {0, 1})->compile_cpus.empty());
  EXPECT_TRUE(ChooseOverlap(-1, false, {}, {0, 1})->compile_cpus.empty());
}

TEST(OverlapMode, RequestedCoresAreCheckedAndKept) {
  EXPECT_EQ(ChooseOverlap(0, false, {2}, {0, 1, 2})->compile_cpus, (std::vector<int>{2}));
  auto same = ChooseOverlap(0, false, {0, 1}, {0, 1});
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.status().message().find("includes the measuring core"), std::string::npos);
  auto outside = ChooseOverlap(0, false, {5}, {0, 1});
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("not among"), std::string::npos);
}

}  // namespace
}  // namespace mtune::worker
