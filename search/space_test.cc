#include "search/space.h"

#include <cstdint>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mtune::search {
namespace {

using ::testing::HasSubstr;

Space TwoTilesAndALoweringSpace() {
  return Space{{{"tile_m", {"8", "16", "32"}},
                {"lowering", {"outerproduct", "dot"}},
                {"tile_n", {"4", "8", "16", "32"}}}};
}

TEST(SpaceSize, IsTheProductOfOptionCounts) {
  EXPECT_EQ(SpaceSize(TwoTilesAndALoweringSpace()), 24u);
  EXPECT_EQ(SpaceSize(Space{}), 1u) << "no knobs: exactly one (empty) candidate";
}

TEST(SpaceSize, EmptyKnobEmptiesTheSpace) {
  Space space = TwoTilesAndALoweringSpace();
  space.knobs.push_back({"empty", {}});
  EXPECT_EQ(SpaceSize(space), 0u);
}

TEST(SpaceSize, SaturatesInsteadOfOverflowing) {
  Space space;
  for (int i = 0; i < 30; ++i) {
    space.knobs.push_back({"k" + std::to_string(i), std::vector<std::string>(10, "")});
    for (int j = 0; j < 10; ++j) space.knobs.back().options[j] = std::to_string(j);
  }
  EXPECT_EQ(SpaceSize(space), std::numeric_limits<uint64_t>::max());
  // Saturation must not hide a later empty knob.
  space.knobs.push_back({"empty", {}});
  EXPECT_EQ(SpaceSize(space), 0u);
}

TEST(PointIndex, RoundTripsAndIsLexicographic) {
  const Space space = TwoTilesAndALoweringSpace();
  EXPECT_EQ(PointAtIndex(space, 0), (Point{0, 0, 0}));
  EXPECT_EQ(PointAtIndex(space, 1), (Point{0, 0, 1})) << "last knob varies fastest";
  EXPECT_EQ(PointAtIndex(space, 4), (Point{0, 1, 0}));
  EXPECT_EQ(PointAtIndex(space, 23), (Point{2, 1, 3}));
  for (uint64_t i = 0; i < SpaceSize(space); ++i) {
    EXPECT_EQ(IndexOfPoint(space, PointAtIndex(space, i)), i);
  }
}

TEST(ValidatePoint, RejectsWrongArityAndOutOfRange) {
  const Space space = TwoTilesAndALoweringSpace();
  EXPECT_TRUE(ValidatePoint(space, {2, 1, 3}).ok());
  EXPECT_FALSE(ValidatePoint(space, {0, 0}).ok());
  const absl::Status status = ValidatePoint(space, {0, 2, 0});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("lowering"));
}

TEST(ValidateSpace, RejectsDuplicatesAndEmptyNames) {
  EXPECT_TRUE(ValidateSpace(TwoTilesAndALoweringSpace()).ok());
  EXPECT_THAT(ValidateSpace(Space{{{"a", {"1"}}, {"a", {"2"}}}}).message(),
              HasSubstr("duplicate knob 'a'"));
  EXPECT_THAT(ValidateSpace(Space{{{"a", {"1", "1"}}}}).message(), HasSubstr("twice"));
  EXPECT_FALSE(ValidateSpace(Space{{{"", {"1"}}}}).ok());
}

TEST(KnobValues, RoundTrip) {
  const Space space = TwoTilesAndALoweringSpace();
  absl::StatusOr<KnobValues> values = ValuesFromPoint(space, {1, 1, 2});
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(*values, (KnobValues{{"tile_m", "16"}, {"lowering", "dot"}, {"tile_n", "16"}}));
  absl::StatusOr<Point> point = PointFromValues(space, *values);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_EQ(*point, (Point{1, 1, 2}));
}

TEST(KnobValues, ErrorsNameTheProblem) {
  const Space space = TwoTilesAndALoweringSpace();
  EXPECT_FALSE(ValuesFromPoint(space, {3, 0, 0}).ok());
  EXPECT_THAT(PointFromValues(space, {{"tile_m", "8"}, {"lowering", "dot"}}).status().message(),
              HasSubstr("no value for knob 'tile_n'"));
  EXPECT_THAT(
      PointFromValues(space, {{"tile_m", "7"}, {"lowering", "dot"}, {"tile_n", "4"}})
          .status()
          .message(),
      HasSubstr("has no option '7'"));
  EXPECT_THAT(PointFromValues(space, {{"tile_m", "8"},
                                      {"lowering", "dot"},
                                      {"tile_n", "4"},
                                      {"tile_k", "1"}})
                  .status()
                  .message(),
              HasSubstr("unknown knob 'tile_k'"));
}

// Another problem's candidate mapped into this space (a warm start): exact options
// where they exist, else the nearest on a log scale; a word with no match, or a
// missing knob, maps nowhere.
TEST(NearestPoint, TakesExactOptionsElseTheNearestOnALogScale) {
  const Space space = TwoTilesAndALoweringSpace();
  EXPECT_EQ(NearestPoint(space, {{"tile_m", "16"}, {"lowering", "dot"}, {"tile_n", "8"}}), (Point{1, 1, 1}));
  // 12 is nearer 16 than 8 on a log scale (log2 12/8 = 0.58 > log2 16/12 = 0.42);
  // 513 snaps to the largest option, 1 to the smallest.
  EXPECT_EQ(NearestPoint(space, {{"tile_m", "12"}, {"lowering", "outerproduct"}, {"tile_n", "513"}}),
            (Point{1, 0, 3}));
  EXPECT_EQ(NearestPoint(space, {{"tile_m", "1"}, {"lowering", "dot"}, {"tile_n", "4"}}), (Point{0, 1, 0}));
  EXPECT_EQ(NearestPoint(space, {{"tile_m", "8"}, {"lowering", "fma"}, {"tile_n", "4"}}), std::nullopt);
  EXPECT_EQ(NearestPoint(space, {{"tile_m", "8"}, {"lowering", "dot"}}), std::nullopt);
  // A knob the values lack (a candidate stored before the template had it) takes the
  // fallback's value, mapped alike; the values win where they have the knob.
  EXPECT_EQ(NearestPoint(space, {{"tile_m", "8"}, {"lowering", "dot"}}, {{"tile_n", "7"}, {"tile_m", "32"}}),
            (Point{0, 1, 1}));
  EXPECT_EQ(NearestPoint(space, {{"tile_m", "8"}}, {{"tile_n", "8"}}), std::nullopt);
}

TEST(FormatPoint, ShowsNamesAndValues) {
  EXPECT_EQ(FormatPoint(TwoTilesAndALoweringSpace(), {0, 1, 3}), "{tile_m=8, lowering=dot, tile_n=32}");
}

}  // namespace
}  // namespace mtune::search
