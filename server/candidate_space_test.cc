#include "server/candidate_space.h"

#include <string>

#include "gtest/gtest.h"
#include "search/space.h"
#include "strategies/default_candidate.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"

namespace mtune::server {
namespace {

CandidateSpace MatmulPackedSpace(const std::string& key) {
  auto problem = strategies::ParseProblemKey(key);
  EXPECT_TRUE(problem.ok()) << problem.status();
  auto tpl = strategies::DefaultTemplateFor(problem->family);
  EXPECT_TRUE(tpl.ok()) << tpl.status();
  EXPECT_EQ(tpl->name, "matmul_packed");
  auto knobs = strategies::ExtractKnobSpace(tpl->text, *problem);
  EXPECT_TRUE(knobs.ok()) << knobs.status();
  return CandidateSpace(*knobs);
}

TEST(CandidateSpace, SearchesTheFreeKnobsAndSolvesTheDerivedOnes) {
  // 120 rows are not a whole number of 128-row blocks (8 rows of padding, too few for
  // the default to take the whole of m instead): the cache tiles pad C, so the copy
  // back of C (copy_back_c) must stay; at 512 rows it must go.
  for (const auto& [key, copy_back] : {std::pair{"matmul:m=120,n=128,k=512:f32", "1"},
                                       std::pair{"matmul:m=512,n=512,k=512:f32", "0"}}) {
    const CandidateSpace space = MatmulPackedSpace(key);
    uint64_t full = 1;
    for (const auto& knob : space.knobs().knobs) {
      full *= knob.options.size();
      bool searched = false;
      for (const auto& k : space.search_space().knobs) searched |= k.name == knob.name;
      EXPECT_EQ(searched, !knob.derived) << key << " " << knob.name;
    }
    // peel_m2, peel_n2 and copy_back_c have two options each: the search sees an eighth.
    EXPECT_EQ(search::SpaceSize(space.search_space()) * 8, full) << key;

    std::optional<strategies::KnobValues> defaults = strategies::DefaultCandidate(space.knobs());
    ASSERT_TRUE(defaults.has_value()) << key;
    absl::StatusOr<search::Point> point = space.PointOf(*defaults);
    ASSERT_TRUE(point.ok()) << key << ": " << point.status();
    EXPECT_EQ(point->size(), space.search_space().knobs.size());
    std::optional<strategies::KnobValues> completed = space.Complete(*point);
    ASSERT_TRUE(completed.has_value()) << key;
    EXPECT_EQ(*completed, *defaults) << key;
    EXPECT_EQ(completed->at("copy_back_c"), copy_back) << key;
    EXPECT_TRUE(space.knobs().SatisfiesConstraints(*completed)) << key;
  }
}

TEST(CandidateSpace, APointWhoseFreeKnobsBreakAConstraintHasNoCompletion) {
  const CandidateSpace space = MatmulPackedSpace("matmul:m=512,n=512,k=512:f32");
  std::optional<strategies::KnobValues> defaults = strategies::DefaultCandidate(space.knobs());
  ASSERT_TRUE(defaults.has_value());
  // A 16 x 64 register tile needs far more than the 32 zmm registers: no value of
  // the derived knobs can repair that.
  (*defaults)["tile_m2"] = "16";
  (*defaults)["tile_n2"] = "64";
  absl::StatusOr<search::Point> point = space.PointOf(*defaults);
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_FALSE(space.Complete(*point).has_value());
  // Malformed points are refused too, and a candidate missing a free knob has no point.
  EXPECT_FALSE(space.Complete(search::Point{}).has_value());
  defaults->erase("tile_m1");
  EXPECT_FALSE(space.PointOf(*defaults).ok());
}

}  // namespace
}  // namespace mtune::server
