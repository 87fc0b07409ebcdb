#include "strategies/knob_space.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "strategies/template_library.h"

namespace mtune::strategies {
namespace {

const KnobSpec* Find(const KnobSpace& s, const std::string& name) {
  for (const auto& k : s.knobs)
    if (k.name == name) return &k;
  return nullptr;
}

std::string MatmulTemplate() {
  auto t = FindTemplate("matmul_2level");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->text : "";
}

TEST(KnobSpace, ExpandsProblemDependentOptions) {
  auto problem = ParseProblemKey("matmul:m=100,n=512,k=64:f32");
  ASSERT_TRUE(problem.ok());
  auto space = ExtractKnobSpace(MatmulTemplate(), *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_NE(Find(*space, "tile_m1"), nullptr);
  EXPECT_EQ(Find(*space, "tile_m1")->options, (std::vector<std::string>{"16", "32", "64"}));
  EXPECT_EQ(Find(*space, "tile_k1")->options, (std::vector<std::string>{"32", "64"}));
  EXPECT_EQ(Find(*space, "tile_n1")->options.back(), "512");
  const KnobSpec* lowering = Find(*space, "contraction_lowering");
  ASSERT_NE(lowering, nullptr);
  EXPECT_TRUE(lowering->is_alternatives);
  EXPECT_EQ(lowering->options, (std::vector<std::string>{"outerproduct", "dot"}));
  EXPECT_EQ(Find(*space, "tile_m2")->divides, "tile_m1");
  // tile_k1's default (256) exceeds k=64: no complete default candidate.
  EXPECT_FALSE(space->Defaults().has_value());
}

TEST(KnobSpace, Pow2BelowItsLowerBoundKeepsTheLowerBound) {
  // A tile at least as large as the dimension covers it whole (padded).
  auto problem = ParseProblemKey("matmul:m=16,n=16,k=8:f32");
  auto space = ExtractKnobSpace(MatmulTemplate(), *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(Find(*space, "tile_n1")->options, (std::vector<std::string>{"32"}));
  EXPECT_EQ(Find(*space, "tile_m1")->options, (std::vector<std::string>{"16"}));
}

TEST(KnobSpace, DefaultsOfALargeProblemAreTheTemplateSelection) {
  auto problem = ParseProblemKey("matmul:m=512,n=512,k=512:f32");
  ASSERT_TRUE(problem.ok());
  auto space = ExtractKnobSpace(MatmulTemplate(), *problem);
  ASSERT_TRUE(space.ok());
  auto defaults = space->Defaults();
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->at("tile_m1"), "64");
  EXPECT_EQ(defaults->at("contraction_lowering"), "outerproduct");
  EXPECT_EQ(space->Size(), 6u * 5 * 5 * 4 * 2 * 3 * 2);
}

TEST(KnobSpace, ConstraintPrunesANonDividingInnerTile) {
  auto problem = ParseProblemKey("matmul:m=512,n=512,k=512:f32");
  const char* text = R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      %o = transform.tune.knob<"outer"> options = [4, 6, 8] -> !transform.param<i64>
      %i = transform.tune.knob<"inner"> options = [2, 4] {mtune.divides = "outer"} -> !transform.param<i64>
      transform.yield
    } })mlir";
  auto space = ExtractKnobSpace(text, *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->knobs[1].divides, "outer");
  EXPECT_TRUE(space->SatisfiesConstraints({{"outer", "8"}, {"inner", "4"}}));
  EXPECT_TRUE(space->SatisfiesConstraints({{"outer", "6"}, {"inner", "2"}}));
  KnobValues bad = {{"outer", "6"}, {"inner", "4"}};  // 4 does not divide 6
  EXPECT_FALSE(space->SatisfiesConstraints(bad));
  absl::Status s = space->Check(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("inner=4 must divide outer=6"), std::string::npos) << s;
  // Instantiation refuses it too, so it never reaches a compile.
  EXPECT_FALSE(Instantiate(text, *problem, bad).ok());
}

TEST(KnobSpace, DanglingConstraintIsAnError) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  const char* text = R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      %i = transform.tune.knob<"inner"> options = [2, 4] {mtune.divides = "nope"} -> !transform.param<i64>
      transform.yield
    } })mlir";
  EXPECT_NE(ExtractKnobSpace(text, *problem).status().message().find("which does not exist"),
            std::string::npos);
}

TEST(Instantiate, SetsEverySelectionAndVerifies) {
  auto problem = ParseProblemKey("matmul:m=512,n=512,k=512:f32");
  auto space = ExtractKnobSpace(MatmulTemplate(), *problem);
  KnobValues v = *space->Defaults();
  v["tile_m1"] = "128";
  v["contraction_lowering"] = "dot";
  auto script = Instantiate(MatmulTemplate(), *problem, v);
  ASSERT_TRUE(script.ok()) << script.status();
  EXPECT_NE(script->find("tune.knob<\"tile_m1\"> = 128 : i64 from options = [16, 32, 64, 128, 256, 512]"),
            std::string::npos)
      << *script;
  EXPECT_NE(script->find("selected_region = 1"), std::string::npos);
}

TEST(Instantiate, RejectsValuesOutsideOptionsAndUnknownKnobs) {
  auto problem = ParseProblemKey("matmul:m=512,n=512,k=512:f32");
  auto space = ExtractKnobSpace(MatmulTemplate(), *problem);
  KnobValues v = *space->Defaults();
  v["tile_m1"] = "7";
  auto script = Instantiate(MatmulTemplate(), *problem, v);
  ASSERT_FALSE(script.ok());
  EXPECT_NE(script.status().message().find("'7' is not among its options"), std::string::npos);
  v = *space->Defaults();
  v["bogus"] = "1";
  EXPECT_NE(Instantiate(MatmulTemplate(), *problem, v).status().message().find("no knob 'bogus'"),
            std::string::npos);
  v = *space->Defaults();
  v.erase("tile_k2");
  EXPECT_NE(Instantiate(MatmulTemplate(), *problem, v).status().message().find("no value"),
            std::string::npos);
}

TEST(KnobSpace, TemplateThatDoesNotParseCarriesDiagnostics) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  auto space = ExtractKnobSpace("module { transform.bogus_op }", *problem);
  ASSERT_FALSE(space.ok());
  EXPECT_EQ(space.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(space.status().message().find("does not parse"), std::string::npos);
  EXPECT_NE(space.status().message().find("bogus_op"), std::string::npos) << space.status();
}

TEST(KnobSpace, DuplicateKnobsAndEmptyOptionsAreErrors) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  const char* dup = R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      %a = transform.tune.knob<"t"> options = [1, 2] -> !transform.param<i64>
      %b = transform.tune.knob<"t"> options = [1, 2] -> !transform.param<i64>
      transform.yield
    } })mlir";
  EXPECT_NE(ExtractKnobSpace(dup, *problem).status().message().find("declared twice"),
            std::string::npos);
  const char* empty = R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      %a = transform.tune.knob<"t"> options = [] -> !transform.param<i64>
      transform.yield
    } })mlir";
  EXPECT_NE(ExtractKnobSpace(empty, *problem).status().message().find("has no options"),
            std::string::npos);
}

// A template with one knob `t` declared as `knob` (plus `extra` ops).
std::string OneKnob(const std::string& knob, const std::string& extra = "") {
  return R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      )mlir" + knob + "\n" + extra + R"mlir(
      transform.yield
    } })mlir";
}

TEST(KnobSpace, HugeOptionOperandsAreClearErrorsNotEndlessLoops) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  // divisors(X) of a huge prime used to count to X.
  for (const char* form : {"divisors(9223372036854775783)", "divisors(99999999999999999999)",
                           "pow2(1, 4294967296)"}) {
    auto space = ExtractKnobSpace(
        OneKnob(std::string("%a = transform.tune.knob<\"t\"> options = \"") + form +
                "\" -> !transform.param<i64>"),
        *problem);
    ASSERT_FALSE(space.ok()) << form;
    EXPECT_NE(space.status().message().find("exceeds the limit"), std::string::npos)
        << space.status();
  }
  // The largest accepted operand expands at once, in order.
  auto space = ExtractKnobSpace(
      OneKnob(R"k(%a = transform.tune.knob<"t"> options = "divisors(2147483647)" -> !transform.param<i64>)k"),
      *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->knobs[0].options, (std::vector<std::string>{"1", "2147483647"}));
  space = ExtractKnobSpace(
      OneKnob(R"k(%a = transform.tune.knob<"t"> options = "divisors(12, 6)" -> !transform.param<i64>)k"),
      *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->knobs[0].options, (std::vector<std::string>{"1", "2", "3", "4", "6"}));
  for (const char* form : {"divisors(0)", "divisors(-6)", "divisors(m, 0)"}) {
    auto empty = ExtractKnobSpace(
        OneKnob(std::string("%a = transform.tune.knob<\"t\"> options = \"") + form +
                "\" -> !transform.param<i64>"),
        *problem);
    EXPECT_NE(empty.status().message().find("has no options"), std::string::npos)
        << form << ": " << empty.status();
  }
}

TEST(KnobSpace, DivisibilityBetweenNonIntegerKnobsIsAnError) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  auto space = ExtractKnobSpace(
      OneKnob(R"k(%a = transform.tune.knob<"t"> options = ["dot", "outerproduct"] {mtune.divides = "u"} -> !transform.any_param)k",
              R"k(%b = transform.tune.knob<"u"> options = [4, 8] -> !transform.param<i64>)k"),
      *problem);
  ASSERT_FALSE(space.ok());
  EXPECT_NE(space.status().message().find("non-integer option 'dot'"), std::string::npos)
      << space.status();
}

}  // namespace
}  // namespace mtune::strategies
