#include "strategies/features.h"

#include "gtest/gtest.h"
#include "strategies/problem.h"

namespace mtune::strategies {
namespace {

// conv 3x3 on a 56-wide input: the output is 54 wide.
Problem Conv() {
  auto p = ParseProblemKey("conv_2d_nhwc_hwcf:n=1,h=56,w=56,c=64,kh=3,kw=3,f=64,sh=1,sw=1,dh=1,dw=1:f32");
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

TEST(CandidateFeatures, RowsHaveOneLengthPerTemplate) {
  const Problem conv = Conv();
  const auto a = CandidateFeatures(conv, {{"tile_ow", "6"}, {"tile_f", "64"}, {"loop_order", "n_oh_ow_f"}});
  const auto b = CandidateFeatures(conv, {{"tile_ow", "none"}, {"tile_f", "8"}, {"loop_order", "f_n_oh_ow"}});
  EXPECT_EQ(a.size(), b.size());
  EXPECT_NE(a, b);
}

// A tile that divides its dimension wastes nothing on padding; one that does not
// shows it (the conv optimum's tile_ow=6 divides the output width 54, 8 does not).
TEST(CandidateFeatures, PaddingOfTilesAgainstTheirDimension) {
  const Problem conv = Conv();
  auto padding_of_tile_ow = [&](const char* tile) {
    // Knob features (1), dims (11), then per tile_ knob: log2 trips, padding.
    const auto f = CandidateFeatures(conv, {{"tile_ow", tile}});
    return f.back();
  };
  EXPECT_DOUBLE_EQ(padding_of_tile_ow("6"), 1.0);
  EXPECT_DOUBLE_EQ(padding_of_tile_ow("8"), 56.0 / 54.0);
  EXPECT_DOUBLE_EQ(padding_of_tile_ow("none"), 1.0);
}

// "none" (no split) sits at log2(1) = 0, next to the numeric options, not at a code.
TEST(CandidateFeatures, NoneIsAFactorOfOne) {
  auto p = ParseProblemKey("reduce_rows_2d:m=256,n=512:f32");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ(CandidateFeatures(*p, {{"split_reduction", "none"}})[0], 0.0);
  EXPECT_DOUBLE_EQ(CandidateFeatures(*p, {{"split_reduction", "16"}})[0], 4.0);
}

}  // namespace
}  // namespace mtune::strategies
