#include "strategies/features.h"

#include <cmath>
#include <set>

#include "gmock/gmock.h"
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

// Every feature has a name, unique within its row, and CandidateFeatures is the
// values of the named row.
TEST(CandidateFeatures, NamedRowIsTheSameRow) {
  auto p = ParseProblemKey("matmul:m=512,n=512,k=512:f32");
  ASSERT_TRUE(p.ok()) << p.status();
  const KnobValues values = {{"tile_m1", "128"}, {"tile_n1", "256"}, {"tile_k1", "256"}, {"tile_m2", "8"},
                             {"tile_n2", "32"},  {"tile_k2", "8"},   {"pack_a", "yes"}};
  const auto named = NamedCandidateFeatures(*p, values);
  const auto row = CandidateFeatures(*p, values);
  ASSERT_EQ(named.size(), row.size());
  for (size_t i = 0; i < row.size(); ++i) EXPECT_EQ(named[i].value, row[i]) << named[i].name;
  const auto names = FeatureNames(named);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  EXPECT_THAT(names, testing::IsSupersetOf({"knob:tile_m1", "dim:k", "trips:tile_k1", "padding:tile_k1",
                                            "register_tile_intensity", "padded_work"}));
}

// A row of another version of the template (one knob less, one knob more) laid out as
// this one's names: shared features keep their values, what it lacks is NaN, what only
// it has is left out.
TEST(CandidateFeatures, RowOfAnotherTemplateVersionIsLaidOutByName) {
  auto p = ParseProblemKey("reduce_rows_2d:m=256,n=512:f32");
  ASSERT_TRUE(p.ok()) << p.status();
  const auto today = NamedCandidateFeatures(*p, {{"bands", "2"}, {"tile_m", "4"}, {"tile_n", "64"}});
  const auto older = NamedCandidateFeatures(*p, {{"tile_m", "8"}, {"tile_n", "64"}, {"unroll", "4"}});
  const std::vector<std::string> names = FeatureNames(today);
  const std::vector<double> row = FeaturesAs(older, names);
  ASSERT_EQ(row.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "knob:bands") {
      EXPECT_TRUE(std::isnan(row[i]));
    } else if (names[i] == "knob:tile_m") {
      EXPECT_DOUBLE_EQ(row[i], 3.0);
    } else {
      EXPECT_FALSE(std::isnan(row[i])) << names[i];
    }
  }
  // Laid out as its own names, a row is itself.
  EXPECT_EQ(FeaturesAs(today, names), CandidateFeatures(*p, {{"bands", "2"}, {"tile_m", "4"}, {"tile_n", "64"}}));
}

}  // namespace
}  // namespace mtune::strategies
