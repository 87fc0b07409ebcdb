// Every free knob of every built-in template changes the code it makes for each family
// the template tunes. A knob that leaves the transformed IR unchanged makes each of its
// options another candidate of the same code, compiled and measured again: a copy's
// transpose_lowering (no transpose to lower) once made a copy's space four times its
// size, and reduce_tiled's tile_n, unread by a split row sum, made 192 of its 300
// candidates repeats. Checked on each family's example problem from the default
// candidate and two seeded random ones (AuditKnobs). A knob may rightly go unread from
// some candidates (a loop order over a single tile), so it passes when one of the
// three reads it.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"
#include "strategies/space_audit.h"
#include "strategies/template_library.h"
#include "strategies/test_examples.h"

namespace mtune::strategies {
namespace {

class SpaceAudit : public testing::TestWithParam<std::string> {};

TEST_P(SpaceAudit, EveryFreeKnobChangesTheCode) {
  const FamilyInfo* info = nullptr;
  for (const FamilyInfo& f : Families())
    if (f.name == GetParam()) info = &f;
  ASSERT_NE(info, nullptr);
  for (const StrategyTemplate& tpl : BuiltinTemplates()) {
    if (!tpl.TunesFamily(info->name)) continue;
    auto problem = ExampleProblemFor(tpl, info->example);
    ASSERT_TRUE(problem.ok()) << problem.status();
    auto audits = AuditKnobs(tpl.text, *problem);
    ASSERT_TRUE(audits.ok()) << tpl.name << ": " << audits.status();
    for (const KnobAudit& audit : *audits) {
      if (audit.compared == 0) continue;  // no other option of it is valid from these candidates
      EXPECT_GT(audit.changed, 0) << tpl.name << " on " << problem->Key() << ": knob '" << audit.name
                                  << "' left the code unchanged from all " << audit.compared
                                  << " candidates; if only some families or some choices of another"
                                  << " knob read it, mark it mtune.only_for or mtune.only_with";
    }
  }
}

std::vector<std::string> TunedFamilies() {
  std::vector<std::string> names;
  for (const FamilyInfo& f : Families())
    if (!f.default_template.empty()) names.push_back(f.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Families, SpaceAudit, testing::ValuesIn(TunedFamilies()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

// The count of valid candidates: reduce_tiled's row-sum space (m odd) is 1200
// combinations of which 108 are valid (tile_n is held at its default with a split,
// and only one band divides m); exact below the limit, estimated above it.
TEST(CountCandidates, ExactBelowTheLimitEstimatedAbove) {
  auto tpl = FindTemplate("reduce_tiled");
  ASSERT_TRUE(tpl.ok()) << tpl.status();
  auto space = ExtractKnobSpace(tpl->text, *ParseProblemKey("reduce_rows_2d:m=1023,n=1025:f32"));
  ASSERT_TRUE(space.ok()) << space.status();
  const CandidateCount exact = CountCandidates(*space);
  EXPECT_TRUE(exact.exact);
  EXPECT_EQ(exact.combinations, 1200u);
  EXPECT_EQ(exact.valid, 108u);
  const CandidateCount estimated = CountCandidates(*space, /*exact_limit=*/10, /*samples=*/20000);
  EXPECT_FALSE(estimated.exact);
  EXPECT_NEAR(static_cast<double>(estimated.valid), 108.0, 10.0);
}

}  // namespace
}  // namespace mtune::strategies
