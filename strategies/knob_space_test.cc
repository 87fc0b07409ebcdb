#include "strategies/knob_space.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "strategies/default_candidate.h"
#include "strategies/template_library.h"

namespace mtune::strategies {
namespace {

// The knob space of library template `name` for problem `key`; an empty space, with
// a test failure that says why, when the template, the key or the extraction fails.
KnobSpace TemplateSpace(const std::string& name, const std::string& key) {
  auto tpl = FindTemplate(name);
  EXPECT_TRUE(tpl.ok()) << name << ": " << tpl.status();
  if (!tpl.ok()) return {};
  auto problem = ParseProblemKey(key);
  EXPECT_TRUE(problem.ok()) << key << ": " << problem.status();
  if (!problem.ok()) return {};
  auto space = ExtractKnobSpace(tpl->text, *problem);
  EXPECT_TRUE(space.ok()) << key << ": " << space.status();
  if (!space.ok()) return {};
  return *std::move(space);
}

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

// A template with both kinds of constraint: tile_n2 must divide tile_n1
// (mtune.divides), and the register tile must fit the registers (SMT).
constexpr char kDividesAndSmtTemplate[] = R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
    %tn1 = transform.tune.knob<"tile_n1"> = 128 from options = [64, 128] -> !transform.param<i64>
    %tm2 = transform.tune.knob<"tile_m2"> = 8 from options = [4, 8, 16] -> !transform.param<i64>
    %tn2 = transform.tune.knob<"tile_n2"> = 32 from options = [16, 32] {mtune.divides = "tile_n1"} -> !transform.param<i64>
    transform.smt.constrain_params(%tm2, %tn2) : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%m2: !smt.int, %n2: !smt.int):
      %acc = smt.declare_fun "acc_bytes" : !smt.int
      %one = smt.int.constant 1
      %rows = smt.int.add %m2, %one
      %reg_bytes = smt.int.mul %rows, %n2, %acc
      %reg_limit = smt.int.constant 1984
      %fits = smt.int.cmp le %reg_bytes, %reg_limit
      smt.assert %fits
    }
    transform.yield
  }
})mlir";

// The error names the constraint that is broken: a register-fit constraint
// (smt.constrain_params), not a divisibility that holds (it once named the first
// mtune.divides knob whenever any constraint failed).
TEST(KnobSpace, AViolatedConstraintIsTheOneNamed) {
  auto problem = ParseProblemKey("matmul:m=128,n=256,k=256:f32");
  ASSERT_TRUE(problem.ok());
  auto space = ExtractKnobSpace(kDividesAndSmtTemplate, *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  std::optional<KnobValues> values = DefaultCandidate(*space);
  ASSERT_TRUE(values.has_value());
  (*values)["tile_m2"] = "16";  // 17 rows x 32 lanes x 4 bytes: more than the registers
  ASSERT_EQ((*values)["tile_n2"], "32");
  absl::Status s = space->Check(*values);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("violated by tile_m2=16, tile_n2=32"), std::string::npos) << s;
  EXPECT_EQ(s.message().find("must divide"), std::string::npos) << s;
}

// `mtune.rule` on a constraint says in words what it requires: a violation quotes it
// after the knob values, and anything but a non-empty string is an error naming the
// constraint.
TEST(KnobSpace, AViolationQuotesTheConstraintsRule) {
  auto problem = ParseProblemKey("matmul:m=128,n=256,k=256:f32");
  ASSERT_TRUE(problem.ok());
  const std::string plain = kDividesAndSmtTemplate;
  const std::string header = "transform.smt.constrain_params(%tm2, %tn2)";
  ASSERT_NE(plain.find(header), std::string::npos);
  auto with_rule = [&](const std::string& rule_attr) {
    std::string text = plain;
    text.insert(text.find(header) + header.size(), " {mtune.rule = " + rule_attr + "}");
    return text;
  };
  auto space = ExtractKnobSpace(with_rule("\"the accumulators fit the registers\""), *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_EQ(space->constraints.size(), 1u);
  EXPECT_EQ(space->constraints[0].rule, "the accumulators fit the registers");
  KnobValues values = *DefaultCandidate(*space);
  values["tile_m2"] = "16";
  absl::Status s = space->Check(values);
  EXPECT_NE(s.message().find("violated by tile_m2=16, tile_n2=32 (the accumulators fit the registers)"),
            std::string::npos)
      << s;
  // Without a rule the message is as before.
  auto bare = ExtractKnobSpace(plain, *problem);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(bare->constraints[0].rule, "");
  EXPECT_TRUE(absl::EndsWith(bare->Check(values).message(), "violated by tile_m2=16, tile_n2=32"))
      << bare->Check(values);
  for (const char* bad : {"3", "\"\""}) {
    auto refused = ExtractKnobSpace(with_rule(bad), *problem);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(refused.status().message().find("mtune.rule must be a non-empty string"), std::string::npos)
        << refused.status();
  }
}

// A footprint constraint over two knobs and a problem dimension, written with
// upstream transform.smt.constrain_params: tm * k * elem_bytes <= 16384 and tn % tm == 0.
constexpr char kSmtTemplate[] = R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
    %tm = transform.tune.knob<"tm"> = 4 from options = [2, 4, 8, 16] -> !transform.param<i64>
    %tn = transform.tune.knob<"tn"> = 8 from options = [6, 8, 16] -> !transform.param<i64>
    transform.smt.constrain_params(%tm, %tn) : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%a: !smt.int, %b: !smt.int):
      %k = smt.declare_fun "k" : !smt.int
      %e = smt.declare_fun "elem_bytes" : !smt.int
      %bytes = smt.int.mul %a, %k, %e
      %cap = smt.int.constant 16384
      %fits = smt.int.cmp le %bytes, %cap
      %rem = smt.int.mod %b, %a
      %zero = smt.int.constant 0
      %divides = smt.eq %rem, %zero : !smt.int
      %both = smt.and %fits, %divides
      smt.assert %both
    }
    transform.yield
  }
})mlir";

TEST(KnobSpace, SmtConstraintPrunesWithoutCompilingAndIsRemovedOnInstantiation) {
  auto problem = ParseProblemKey("matmul:m=64,n=64,k=512:f32");  // 512 * 4 B per tm row
  ASSERT_TRUE(problem.ok());
  auto space = ExtractKnobSpace(kSmtTemplate, *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_EQ(space->constraints.size(), 1u);
  EXPECT_EQ(space->constraints[0].Knobs(), (std::vector<std::string>{"tm", "tn"}));
  EXPECT_TRUE(space->SatisfiesConstraints({{"tm", "8"}, {"tn", "16"}}));    // 16 KiB, 8 | 16
  EXPECT_FALSE(space->SatisfiesConstraints({{"tm", "16"}, {"tn", "16"}}));  // 32 KiB
  EXPECT_FALSE(space->SatisfiesConstraints({{"tm", "4"}, {"tn", "6"}}));    // 4 does not divide 6
  absl::Status s = space->Check({{"tm", "16"}, {"tn", "16"}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("violated by tm=16, tn=16"), std::string::npos) << s;
  EXPECT_FALSE(Instantiate(kSmtTemplate, *problem, {{"tm", "16"}, {"tn", "16"}}).ok());

  // The same template for a smaller k admits the larger tile: the dimension is bound per problem.
  auto small = ParseProblemKey("matmul:m=64,n=64,k=128:f32");
  auto small_space = ExtractKnobSpace(kSmtTemplate, *small);
  ASSERT_TRUE(small_space.ok());
  EXPECT_TRUE(small_space->SatisfiesConstraints({{"tm", "16"}, {"tn", "16"}}));

  // The interpreter always fails on constrain_params: instantiation removes it.
  auto script = Instantiate(kSmtTemplate, *problem, {{"tm", "8"}, {"tn", "16"}});
  ASSERT_TRUE(script.ok()) << script.status();
  EXPECT_EQ(script->find("constrain_params"), std::string::npos);
  EXPECT_EQ(script->find("smt."), std::string::npos);
}

TEST(KnobSpace, MatmulPackedPrunesSpillingRegisterTilesByAccumulatorType) {
  auto tpl = FindTemplate("matmul_packed");
  ASSERT_TRUE(tpl.ok()) << tpl.status();
  for (const char* type : {"f32", "bf16", "f64"}) {
    auto problem = ParseProblemKey(std::string("matmul:m=512,n=512,k=512:") + type);
    ASSERT_TRUE(problem.ok());
    auto space = ExtractKnobSpace(tpl->text, *problem);
    ASSERT_TRUE(space.ok()) << space.status();
    const bool f64 = std::string(type) == "f64";
    // The written default (8 x 32 accumulators) is 16 zmm registers in f32 (bf16
    // accumulates in f32) but 32 in f64, which leaves none for B: pruned there, and
    // the default candidate becomes the nearest valid one, 8 x 16.
    EXPECT_EQ(space->Defaults().has_value(), !f64) << type;
    std::optional<KnobValues> defaults = DefaultCandidate(*space);
    ASSERT_TRUE(defaults.has_value()) << type;
    EXPECT_EQ(defaults->at("tile_m2"), "8") << type;
    EXPECT_EQ(defaults->at("tile_n2"), f64 ? "16" : "32") << type;
    KnobValues values = *defaults;
    values["tile_n2"] = "32";
    values["tile_m2"] = "12";
    values["tile_m1"] = "96";  // m blocks are whole register tiles
    values["copy_back_c"] = "1";  // 512 is not a whole number of 96-row blocks: C is padded
    // 12 x 32 f32 accumulators are 24 registers, plus 2 for B and 1 broadcast.
    EXPECT_EQ(space->SatisfiesConstraints(values), !f64) << type;
    values["tile_m2"] = "16";
    // 16 x 32 f32 accumulators fill all 32 registers: the k loop would spill.
    EXPECT_FALSE(space->SatisfiesConstraints(values)) << type;
  }
}

// matmul_packed's cache tiles give way to whole odd dimensions (and k rounded up to
// 8) where the written tiles would pad by more than an eighth; round shapes keep them.
TEST(KnobSpace, MatmulPackedDefaultsToExactCacheTilesOnOddShapes) {
  auto tpl = FindTemplate("matmul_packed");
  ASSERT_TRUE(tpl.ok()) << tpl.status();
  struct Expect {
    std::string key, m1, n1, k1, peel_m2, peel_n2, copy_back_c;
  };
  for (const Expect& e : std::vector<Expect>{
           {"matmul:m=512,n=512,k=512:f32", "128", "512", "512", "0", "0", "0"},
           {"matmul:m=513,n=257,k=129:f32", "513", "257", "136", "1", "1", "0"},
           // 255 would leave a 31-column register tile (not a power of two): 256.
           {"matmul:m=127,n=255,k=513:f32", "128", "256", "520", "0", "0", "1"},
           {"matmul:m=64,n=512,k=1024:f32", "64", "512", "512", "0", "0", "0"}}) {
    auto problem = ParseProblemKey(e.key);
    ASSERT_TRUE(problem.ok()) << e.key;
    auto space = ExtractKnobSpace(tpl->text, *problem);
    ASSERT_TRUE(space.ok()) << e.key << ": " << space.status();
    std::optional<KnobValues> d = DefaultCandidate(*space);
    ASSERT_TRUE(d.has_value()) << e.key;
    EXPECT_EQ(d->at("tile_m1"), e.m1) << e.key;
    EXPECT_EQ(d->at("tile_n1"), e.n1) << e.key;
    EXPECT_EQ(d->at("tile_k1"), e.k1) << e.key;
    EXPECT_EQ(d->at("tile_m2"), "8") << e.key;
    EXPECT_EQ(d->at("tile_n2"), "32") << e.key;
    EXPECT_EQ(d->at("peel_m2"), e.peel_m2) << e.key;
    EXPECT_EQ(d->at("peel_n2"), e.peel_n2) << e.key;
    EXPECT_EQ(d->at("copy_back_c"), e.copy_back_c) << e.key;
  }
}

TEST(DefaultCandidate, TakesTheNearestOptionThenTheNearestValidCandidate) {
  // k=67 offers k tiles 32 and 64, so the written 256 becomes 64 (the nearest on a
  // log scale); and a constraint that the written values break is repaired by
  // changing the last-declared knob first.
  auto problem = ParseProblemKey("matmul:m=64,n=64,k=67:f32");
  ASSERT_TRUE(problem.ok());
  auto space = ExtractKnobSpace(R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
    %tk = transform.tune.knob<"tk"> = 256 from options = "pow2(32, k)" -> !transform.param<i64>
    %a = transform.tune.knob<"a"> = 8 from options = [2, 4, 8] -> !transform.param<i64>
    %b = transform.tune.knob<"b"> = 8 from options = [2, 4, 8] -> !transform.param<i64>
    transform.smt.constrain_params(%a, %b) : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%x: !smt.int, %y: !smt.int):
      %p = smt.int.mul %x, %y
      %limit = smt.int.constant 32
      %ok = smt.int.cmp le %p, %limit
      smt.assert %ok
    }
    transform.yield
  }
})mlir", *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_FALSE(space->Defaults().has_value());
  EXPECT_EQ(NearestDefaults(*space), (KnobValues{{"tk", "64"}, {"a", "8"}, {"b", "8"}}));
  EXPECT_EQ(DefaultCandidate(*space), (KnobValues{{"tk", "64"}, {"a", "8"}, {"b", "4"}}));
}

TEST(DefaultCandidate, SolvesDerivedKnobsWithoutCountingThemAsChanges) {
  // "flag" is derived: 1 exactly when the tile does not divide k. Whatever k is, the
  // written tile is kept and only the flag follows it (it is solved, not counted as
  // a changed knob, so the repair never moves the tile to suit the flag).
  auto problem = ParseProblemKey("matmul:m=64,n=64,k=96:f32");
  ASSERT_TRUE(problem.ok());
  const std::string text = R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
    %t = transform.tune.knob<"t"> = 64 from options = [32, 64, 96] -> !transform.param<i64>
    %f = transform.tune.knob<"flag"> = 1 from options = [0, 1] {mtune.derived} -> !transform.param<i64>
    transform.smt.constrain_params(%t, %f) : (!transform.param<i64>, !transform.param<i64>) -> () {
    ^bb0(%x: !smt.int, %y: !smt.int):
      %k = smt.declare_fun "k" : !smt.int
      %zero = smt.int.constant 0
      %one = smt.int.constant 1
      %rem = smt.int.mod %k, %x
      %whole = smt.eq %rem, %zero : !smt.int
      %set = smt.eq %y, %one : !smt.int
      %ok = smt.xor %whole, %set
      smt.assert %ok
    }
    transform.yield
  }
})mlir";
  auto space = ExtractKnobSpace(text, *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_EQ(space->knobs.size(), 2u);
  EXPECT_FALSE(space->knobs[0].derived);
  EXPECT_TRUE(space->knobs[1].derived);
  // 64 does not divide 96, so the written flag 1 is right: nothing to repair.
  EXPECT_EQ(DefaultCandidate(*space), (KnobValues{{"t", "64"}, {"flag", "1"}}));
  // At k = 128 the flag must become 0, the tile kept. (Counted as a change, the
  // flag would tie with moving the tile to 96, and the later-declared flag would win
  // only by the tie rule.)
  auto even = ParseProblemKey("matmul:m=64,n=64,k=128:f32");
  ASSERT_TRUE(even.ok());
  auto even_space = ExtractKnobSpace(text, *even);
  ASSERT_TRUE(even_space.ok()) << even_space.status();
  EXPECT_EQ(DefaultCandidate(*even_space), (KnobValues{{"t", "64"}, {"flag", "0"}}));
  // A search point names only the free knobs: the flag is added, following the tile.
  EXPECT_EQ(SolveDerivedKnobs(*space, {{"t", "32"}}), (KnobValues{{"t", "32"}, {"flag", "0"}}));
  EXPECT_EQ(SolveDerivedKnobs(*space, {{"t", "64"}}), (KnobValues{{"t", "64"}, {"flag", "1"}}));
  // Kept (named by the user) and wrong: no solution.
  EXPECT_EQ(SolveDerivedKnobs(*space, {{"t", "64"}, {"flag", "0"}}, {"flag"}), std::nullopt);
}

TEST(DefaultCandidate, RepairsUpToFourKnobsButGivesUpOnHugeSpaces) {
  auto problem = ParseProblemKey("matmul:m=64,n=64,k=64:f32");
  ASSERT_TRUE(problem.ok());
  // `count` knobs, each defaulting to its last option; the constraint (the sum of
  // the first `constrained` knobs <= `constrained`) needs all of those changed.
  auto space_with = [&](int options, int count, int constrained) {
    std::string list;
    for (int i = 1; i <= options; ++i) list += (i > 1 ? ", " : "") + std::to_string(i);
    const std::string knob = " = " + std::to_string(options) + " from options = [" + list +
                             "] -> !transform.param<i64>\n";
    std::string text = R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
)mlir";
    const std::string names = "abcd";
    std::string params, types, args, sum = "%x0";
    for (int i = 0; i < count; ++i)
      text += absl::StrCat("    %", names.substr(i, 1), " = transform.tune.knob<\"",
                           names.substr(i, 1), "\">", knob);
    for (int i = 0; i < constrained; ++i) {
      params += absl::StrCat(i ? ", " : "", "%", names.substr(i, 1));
      types += absl::StrCat(i ? ", " : "", "!transform.param<i64>");
      args += absl::StrCat(i ? ", " : "", "%x", i, ": !smt.int");
    }
    text += absl::StrCat("    transform.smt.constrain_params(", params, ") : (", types,
                         ") -> () {\n    ^bb0(", args, "):\n");
    std::string body;
    for (int i = 1; i < constrained; ++i) {
      body += absl::StrCat("      %s", i, " = smt.int.add ", sum, ", %x", i, "\n");
      sum = absl::StrCat("%s", i);
    }
    text += body + absl::StrCat("      %limit = smt.int.constant ", constrained, "\n",
                                "      %ok = smt.int.cmp le ", sum, ", %limit\n",
                                "      smt.assert %ok\n    }\n    transform.yield\n  }\n}\n");
    return ExtractKnobSpace(text, *problem);
  };
  auto two = space_with(4, 2, 2);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(DefaultCandidate(*two), (KnobValues{{"a", "1"}, {"b", "1"}}));
  auto three = space_with(6, 4, 3);
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(DefaultCandidate(*three), (KnobValues{{"a", "1"}, {"b", "1"}, {"c", "1"}, {"d", "6"}}));
  auto four = space_with(3, 4, 4);
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(DefaultCandidate(*four), (KnobValues{{"a", "1"}, {"b", "1"}, {"c", "1"}, {"d", "1"}}));
  // 3 knobs of 1,200 options: about 4.3 million pairs, more than the repair tries.
  auto huge = space_with(1200, 3, 3);
  ASSERT_TRUE(huge.ok()) << huge.status();
  EXPECT_FALSE(DefaultCandidate(*huge).has_value());
}

TEST(KnobSpace, SmtConstraintsMtuneCannotEvaluateAreClearErrors) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  auto with_body = [](const std::string& body) {
    return std::string(R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
    %tm = transform.tune.knob<"tm"> options = [2, 4] -> !transform.param<i64>
    transform.smt.constrain_params(%tm) : (!transform.param<i64>) -> () {
    ^bb0(%a: !smt.int):
)mlir") + body + R"mlir(
    }
    transform.yield
  }
})mlir";
  };
  auto error = [&](const std::string& body) {
    return std::string(ExtractKnobSpace(with_body(body), *problem).status().message());
  };
  EXPECT_NE(error(R"mlir(%x = smt.declare_fun "q" : !smt.int
      %c = smt.int.cmp le %a, %x
      smt.assert %c)mlir").find("names neither a dimension of matmul nor elem_bytes / acc_bytes"),
            std::string::npos);
  EXPECT_NE(error(R"mlir(%c = smt.int.constant 4
      %e = smt.eq %a, %c : !smt.int)mlir").find("asserts nothing"),
            std::string::npos);
  EXPECT_NE(error(R"mlir(%bv = smt.int2bv %a : !smt.bv<8>
      %z = smt.bv.constant #smt.bv<0> : !smt.bv<8>
      %e = smt.eq %bv, %z : !smt.bv<8>
      smt.assert %e)mlir").find("'smt.int2bv' is not evaluated by mtune"),
            std::string::npos);
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

// A candidate names an option by its text: two options of one text were one candidate
// counted as two ("3 combinations, 3 valid" for [4, 4, 8]), and the second of two
// regions labelled alike could never be selected.
TEST(KnobSpace, OptionsOrLabelsOfTheSameTextAreErrors) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  const char* options = R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      %a = transform.tune.knob<"t"> = 4 from options = [4, 8, 4] -> !transform.param<i64>
      transform.yield
    } })mlir";
  absl::Status status = ExtractKnobSpace(options, *problem).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("knob 't' lists the option '4' twice"), std::string::npos) << status;
  // Unlike attributes that print alike are refused too: "2" and "2 : i32" are one text.
  const char* alike = R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      %a = transform.tune.knob<"t"> options = [2, 2 : i32] -> !transform.any_param
      transform.yield
    } })mlir";
  status = ExtractKnobSpace(alike, *problem).status();
  EXPECT_NE(status.message().find("lists the option '2' twice"), std::string::npos) << status;
  const char* labels = R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      transform.tune.alternatives<"a"> selected_region = 0 attributes {mtune.labels = ["x", "y", "x"]} {
      }, {
      }, {
      }
      transform.yield
    } })mlir";
  status = ExtractKnobSpace(labels, *problem).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("alternatives 'a' label two regions 'x'"), std::string::npos)
      << status;
  // Options a form expands to the same value (roundup(m, 8) = 8 here) are one option.
  const char* form = R"mlir(module attributes {transform.with_named_sequence} {
    transform.named_sequence @__transform_main(%r: !transform.any_op {transform.readonly}) {
      %a = transform.tune.knob<"t"> = 8 from options = "8, roundup(m, 8)" -> !transform.param<i64>
      transform.yield
    } })mlir";
  auto space = ExtractKnobSpace(form, *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->knobs[0].options, std::vector<std::string>{"8"});
}

// A template of one knob line (the fuzzers' regression inputs).
std::string KnobLines(const std::string& knobs) {
  return "module attributes {transform.with_named_sequence} {\n"
         "  transform.named_sequence @__transform_main(%root: !transform.any_op) {\n" +
         knobs + "\n    transform.yield\n  }\n}\n";
}

TEST(KnobSpace, HugeOptionFormOperandsAreBoundedNotOverflowedOrLooped) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  ASSERT_TRUE(problem.ok());
  // pow2 up to INT64_MAX once overflowed while doubling (knob_space_fuzzer, UBSan);
  // operands are now bounded, and the doubling itself cannot overflow.
  auto pow2 = ExtractKnobSpace(KnobLines(R"mlir(    %a = transform.tune.knob<"a"> options = "pow2(1, 9223372036854775807)" -> !transform.param<i64>)mlir"), *problem);
  EXPECT_EQ(pow2.status().code(), absl::StatusCode::kInvalidArgument);
  auto big = ExtractKnobSpace(KnobLines(R"mlir(    %a = transform.tune.knob<"a"> options = "pow2(1, 2147483647)" -> !transform.param<i64>)mlir"), *problem);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->knobs[0].options.back(), "1073741824");
  // divisors of a large prime once looped ~1e18 times; now refused at once.
  auto prime = ExtractKnobSpace(KnobLines(R"mlir(    %a = transform.tune.knob<"a"> options = "divisors(1000000000000000003)" -> !transform.param<i64>)mlir"), *problem);
  EXPECT_EQ(prime.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(prime.status().message().find("exceeds the limit"), std::string::npos) << prime.status();
  // Below the limit, divisors come from the sqrt walk, in order.
  auto divisors = ExtractKnobSpace(KnobLines(R"mlir(    %a = transform.tune.knob<"a"> options = "divisors(1000000007, 1000000007)" -> !transform.param<i64>
    %b = transform.tune.knob<"b"> options = "divisors(36, 12)" -> !transform.param<i64>)mlir"), *problem);
  ASSERT_TRUE(divisors.ok()) << divisors.status();
  EXPECT_EQ(divisors->knobs[0].options, (std::vector<std::string>{"1", "1000000007"}));
  EXPECT_EQ(divisors->knobs[1].options, (std::vector<std::string>{"1", "2", "3", "4", "6", "9", "12"}));
}

TEST(KnobSpace, OptionFormTermsUniteInAscendingOrderWithRoundedUpDimensions) {
  auto problem = ParseProblemKey("matmul:m=513,n=257,k=129:f32");
  ASSERT_TRUE(problem.ok());
  auto space = ExtractKnobSpace(KnobLines(R"mlir(    %a = transform.tune.knob<"a"> options = "256, 32, roundup(k, 16), pow2(64, 128), 128" -> !transform.param<i64>
    %b = transform.tune.knob<"b"> options = "roundup(n, 32)" -> !transform.param<i64>
    %c = transform.tune.knob<"c"> options = "48" -> !transform.param<i64>
    %d = transform.tune.knob<"d"> options = "rounddown(n, 1), rounddown(n, 6), rounddown(n, 32), rounddown(k, 256)" -> !transform.param<i64>
    %e = transform.tune.knob<"e"> options = "min(k, 8), min(8, k), min(k, 512)" -> !transform.param<i64>)mlir"), *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  // 257 = 42 * 6 + 5 = 8 * 32 + 1; 129 holds no whole tile of 256.
  EXPECT_EQ(space->knobs[3].options, (std::vector<std::string>{"0", "252", "256", "257"}));
  // 129 rounds up to 144; 128 from pow2 and the literal 128 count once.
  EXPECT_EQ(space->knobs[0].options, (std::vector<std::string>{"32", "64", "128", "144", "256"}));
  EXPECT_EQ(space->knobs[1].options, (std::vector<std::string>{"288"}));
  EXPECT_EQ(space->knobs[2].options, (std::vector<std::string>{"48"}));
  EXPECT_EQ(space->knobs[4].options, (std::vector<std::string>{"8", "129"}));
  for (const char* bad : {"roundup(k, 0)", "rounddown(k, 0)", "min(k)", "min(k, q)", "32, roundup(k, 16", "32, nope(k)", "32, , 64"}) {
    auto status = ExtractKnobSpace(
        KnobLines(absl::StrCat("    %a = transform.tune.knob<\"a\"> options = \"", bad,
                               "\" -> !transform.param<i64>")),
        *problem);
    EXPECT_EQ(status.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

// An operand may be a form of one value: the divisors of a dimension rounded up.
TEST(KnobSpace, OptionFormOperandsNest) {
  auto problem = ParseProblemKey("matmul:m=64,n=255,k=64:f32");
  ASSERT_TRUE(problem.ok());
  auto space = ExtractKnobSpace(KnobLines(R"mlir(    %a = transform.tune.knob<"a"> options = "divisors(roundup(n, 16))" -> !transform.param<i64>
    %b = transform.tune.knob<"b"> options = "divisors(roundup(n, 16), min(k, 32)), 3" -> !transform.param<i64>)mlir"), *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->knobs[0].options,
            (std::vector<std::string>{"1", "2", "4", "8", "16", "32", "64", "128", "256"}));
  EXPECT_EQ(space->knobs[1].options, (std::vector<std::string>{"1", "2", "3", "4", "8", "16", "32"}));
  // An operand must be one value; parentheses must balance.
  for (const char* bad : {"divisors(divisors(n))", "divisors(roundup(n, 16)", "roundup(min(n, k, 16)",
                          "min(min(min(min(min(n, 1), 1), 1), 1), 1)"}) {
    auto status = ExtractKnobSpace(
        KnobLines(absl::StrCat("    %a = transform.tune.knob<\"a\"> options = \"", bad,
                               "\" -> !transform.param<i64>")),
        *problem);
    EXPECT_EQ(status.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

// mtune.padded_default: the template's tile stays the default while it pads its
// dimension by at most an eighth; beyond that, the listed value that pads least.
TEST(KnobSpace, PaddedDefaultReplacesATileThatPadsMoreThanAnEighth) {
  auto default_for = [](const std::string& key, const std::string& attrs) -> absl::StatusOr<std::string> {
    auto problem = ParseProblemKey(key);
    EXPECT_TRUE(problem.ok()) << key;
    auto space = ExtractKnobSpace(
        KnobLines(absl::StrCat("    %a = transform.tune.knob<\"a\"> = 128 from options = \"64, 128, "
                               "roundup(m, 8), roundup(m, 1)\" ",
                               attrs, " -> !transform.param<i64>")),
        *problem);
    if (!space.ok()) return space.status();
    return space->knobs[0].default_value;
  };
  const std::string attrs = R"a({mtune.tiles = "m", mtune.padded_default = "roundup(m, 8), roundup(m, 1)"})a";
  EXPECT_EQ(*default_for("matmul:m=512,n=8,k=8:f32", attrs), "128");   // pads nothing
  EXPECT_EQ(*default_for("matmul:m=1000,n=8,k=8:f32", attrs), "128");  // 24 rows: 2.4 %
  EXPECT_EQ(*default_for("matmul:m=513,n=8,k=8:f32", attrs), "513");   // 127 rows: 25 %
  EXPECT_EQ(*default_for("matmul:m=80,n=8,k=8:f32", attrs), "80");     // 48 rows; 80 = roundup(80, 8), listed first
  EXPECT_EQ(*default_for("matmul:m=513,n=8,k=8:f32",
                         R"a({mtune.tiles = "m", mtune.padded_default = "roundup(m, 8)"})a"),
            "520");
  // Without the attributes, or when no listed value is an option, the template's choice stays.
  EXPECT_EQ(*default_for("matmul:m=513,n=8,k=8:f32", ""), "128");
  EXPECT_EQ(*default_for("matmul:m=513,n=8,k=8:f32",
                         R"a({mtune.tiles = "m", mtune.padded_default = "96"})a"),
            "128");
  // The two attributes go together, and the dimension must be the problem's.
  for (const char* bad : {R"a({mtune.tiles = "m"})a", R"a({mtune.padded_default = "roundup(m, 1)"})a",
                          R"a({mtune.tiles = "q", mtune.padded_default = "roundup(m, 1)"})a",
                          R"a({mtune.tiles = "m", mtune.padded_default = "nope(m)"})a"})
    EXPECT_EQ(default_for("matmul:m=513,n=8,k=8:f32", bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
}

// mtune.rest_default: for a dimension split into whole tiles and a rest, the
// template's tile stays the default while it divides the dimension; otherwise the
// listed value (at most the dimension) that leaves the smallest rest, the first
// listed among equals.
TEST(KnobSpace, RestDefaultTakesTheTileThatLeavesTheSmallestRest) {
  auto default_for = [](int64_t f, const std::string& attrs) -> absl::StatusOr<std::string> {
    auto problem = ParseProblemKey(absl::StrCat("conv_1d_nwc_wcf:n=1,w=20,c=8,kw=3,f=", f, ",sw=1,dw=1:f32"));
    EXPECT_TRUE(problem.ok()) << f;
    auto space = ExtractKnobSpace(
        KnobLines(absl::StrCat("    %a = transform.tune.knob<\"a\"> = 32 from options = [8, 16, 32, 48, 64] ",
                               attrs, " -> !transform.param<i64>")),
        *problem);
    if (!space.ok()) return space.status();
    return space->knobs[0].default_value;
  };
  const std::string attrs = R"a({mtune.tiles = "f", mtune.rest_default = "32, 16, 8"})a";
  EXPECT_EQ(*default_for(64, attrs), "32");   // divides
  EXPECT_EQ(*default_for(100, attrs), "32");  // 32, 16 and 8 all leave 4: the first
  EXPECT_EQ(*default_for(48, attrs), "16");   // 32 leaves 16, 16 none
  EXPECT_EQ(*default_for(40, attrs), "8");    // 32 and 16 leave 8, 8 none
  EXPECT_EQ(*default_for(24, attrs), "8");    // 32 is wider than f; 16 leaves 8
  EXPECT_EQ(*default_for(7, attrs), "32");    // nothing listed fits: unchanged
  // One of the two default rules, not both, and always with mtune.tiles.
  for (const char* bad : {R"a({mtune.rest_default = "32, 16, 8"})a",
                          R"a({mtune.tiles = "f", mtune.rest_default = "32", mtune.padded_default = "32"})a"})
    EXPECT_EQ(default_for(100, bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
}

std::string StartPointTemplate(const std::string& points) {
  return "module attributes {transform.with_named_sequence} {\n"
         "  transform.named_sequence @__transform_main(%root: !transform.any_op)\n"
         "      attributes {mtune.start_points = " + points + "} {\n"
         R"mlir(    %a = transform.tune.knob<"a"> = 128 from options = "64, 128, roundup(m, 1)" {mtune.tiles = "m", mtune.padded_default = "roundup(m, 1)"} -> !transform.param<i64>
    %b = transform.tune.knob<"b"> = 8 from options = [1, 8] -> !transform.param<i64>
    transform.yield
  }
}
)mlir";
}

TEST(KnobSpace, StartPointsFollowTheDefaultAndKeepItWhereTheyDoNotApply) {
  auto starts_for = [](const std::string& key, const std::string& points)
      -> absl::StatusOr<std::vector<KnobValues>> {
    auto problem = ParseProblemKey(key);
    EXPECT_TRUE(problem.ok()) << key;
    auto space = ExtractKnobSpace(StartPointTemplate(points), *problem);
    if (!space.ok()) return space.status();
    return StartingCandidates(*space);
  };
  const std::string points = R"([{a = 64 : i64, b = 1 : i64}, {b = 8 : i64}, {b = 3 : i64}])";
  auto round = starts_for("matmul:m=512,n=8,k=8:f32", points);
  ASSERT_TRUE(round.ok()) << round.status();
  // The default first; the second point equals it and the third names no option of
  // b, so both add nothing.
  ASSERT_EQ(round->size(), 2u);
  EXPECT_EQ((*round)[0], (KnobValues{{"a", "128"}, {"b", "8"}}));
  EXPECT_EQ((*round)[1], (KnobValues{{"a", "64"}, {"b", "1"}}));
  // m = 100: a tile of 64 pads m to 128 (28 rows, over an eighth), so the point keeps
  // the default's whole-m tile and changes b only.
  auto odd = starts_for("matmul:m=100,n=8,k=8:f32", points);
  ASSERT_TRUE(odd.ok()) << odd.status();
  ASSERT_EQ(odd->size(), 2u);
  EXPECT_EQ((*odd)[0], (KnobValues{{"a", "100"}, {"b", "8"}}));
  EXPECT_EQ((*odd)[1], (KnobValues{{"a", "100"}, {"b", "1"}}));
  // A value written as an option form is evaluated per problem: the whole of m.
  const std::string whole = R"x([{a = "roundup(m, 1)", b = 1 : i64}])x";
  auto whole_round = starts_for("matmul:m=512,n=8,k=8:f32", whole);
  ASSERT_TRUE(whole_round.ok()) << whole_round.status();
  ASSERT_EQ(whole_round->size(), 2u);
  EXPECT_EQ((*whole_round)[1], (KnobValues{{"a", "512"}, {"b", "1"}}));
  auto whole_odd = starts_for("matmul:m=100,n=8,k=8:f32", whole);
  ASSERT_TRUE(whole_odd.ok()) << whole_odd.status();
  ASSERT_EQ(whole_odd->size(), 2u);
  EXPECT_EQ((*whole_odd)[1], (KnobValues{{"a", "100"}, {"b", "1"}}));
  // A knob the template does not declare, a point that is not a dictionary, a form of
  // more than one term or an unknown form is an error.
  for (const char* bad : {R"([{c = 1 : i64}])", R"([7])", R"("a")", R"x([{a = "roundup(m, 1), 64"}])x",
                          R"x([{a = "whole(m)"}])x"})
    EXPECT_EQ(starts_for("matmul:m=512,n=8,k=8:f32", bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
}

TEST(KnobSpace, MatmulPackedStartPointReadsAInPlaceWithSmallKTiles) {
  auto starts_for = [](const std::string& key) {
    return StartingCandidates(TemplateSpace("matmul_packed", key));
  };
  std::vector<KnobValues> cube = starts_for("matmul:m=512,n=512,k=512:f32");
  ASSERT_EQ(cube.size(), 4u);
  EXPECT_EQ(cube[0].at("tile_k1"), "512");
  EXPECT_EQ(cube[1].at("tile_k1"), "128");
  EXPECT_EQ(cube[1].at("tile_k2"), "1");
  EXPECT_EQ(cube[1].at("pack_a"), "no");
  EXPECT_EQ(cube[1].at("tile_m1"), cube[0].at("tile_m1"));
  // The second point: A packed, B in place, the default's k2.
  EXPECT_EQ(cube[2].at("tile_k1"), "128");
  EXPECT_EQ(cube[2].at("tile_k2"), cube[0].at("tile_k2"));
  EXPECT_EQ(cube[2].at("pack_a"), "only");
  // The third: the whole of m and k, 128-column B panels, A in place.
  EXPECT_EQ(cube[3].at("tile_m1"), "512");
  EXPECT_EQ(cube[3].at("tile_k1"), "512");
  EXPECT_EQ(cube[3].at("tile_n1"), "128");
  EXPECT_EQ(cube[3].at("tile_k2"), "1");
  EXPECT_EQ(cube[3].at("pack_a"), "no");
  // k = 513: 128 would pad k to 640, so the first two points keep the default's k
  // tile (520); the third takes k and m whole (513, 127: its last register tile of m
  // peeled), nothing padded in either.
  std::vector<KnobValues> odd = starts_for("matmul:m=127,n=255,k=513:f32");
  ASSERT_EQ(odd.size(), 4u);
  EXPECT_EQ(odd[1].at("tile_k1"), odd[0].at("tile_k1"));
  EXPECT_EQ(odd[1].at("pack_a"), "no");
  EXPECT_EQ(odd[2].at("pack_a"), "only");
  EXPECT_EQ(odd[3].at("tile_m1"), "127");
  EXPECT_EQ(odd[3].at("tile_k1"), "513");
  EXPECT_EQ(odd[3].at("peel_m2"), "1");
  // B stored transposed has no `only`: the second point keeps the default's packing.
  std::vector<KnobValues> nt = starts_for("matmul_transpose_b:m=512,n=512,k=512:f32");
  ASSERT_EQ(nt.size(), 4u);
  EXPECT_EQ(nt[2].at("pack_a"), nt[0].at("pack_a"));
  EXPECT_EQ(nt[2].at("tile_k1"), "128");
  // 1024^3: the whole of m and k would make a 4 MiB A block, over the constraint's
  // 1 MiB, so the third point is not proposed.
  EXPECT_EQ(starts_for("matmul:m=1024,n=1024,k=1024:f32").size(), 3u);
}

// copy_tiled's start point (streaming stores): tried second by copies where the
// constraint allows them; a transpose has them as its default there (no duplicate),
// and nowhere else the point holds.
// A transpose beyond the L3 also tries 1024 x 16 blocks (copy_tiled's second start
// point), which a copy has no knobs for.
TEST(KnobSpace, CopyStartPointTriesStreamingStoresWhereTheyAreAllowed) {
  auto starts_for = [](const std::string& key) { return StartingCandidates(TemplateSpace("copy_tiled", key)); };
  std::vector<KnobValues> big = starts_for("copy_2d:m=2048,n=4096:f32");
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[0].at("nt_stores"), "0");
  EXPECT_EQ(big[1].at("nt_stores"), "1");
  EXPECT_EQ(big[1].at("tile_r"), "1");
  EXPECT_EQ(starts_for("copy_2d:m=256,n=512:f32").size(), 1u);    // 1 MiB: constraint
  EXPECT_EQ(starts_for("copy_2d:m=1000,n=1048:f32").size(), 1u);  // rows off cache lines
  std::vector<KnobValues> transpose = starts_for("transpose_2d:m=2048,n=4096:f32");
  ASSERT_EQ(transpose.size(), 2u);
  EXPECT_EQ(transpose[0].at("nt_stores"), "1");
  EXPECT_EQ(transpose[0].at("block_r"), "512");
  EXPECT_EQ(transpose[0].at("unroll_c"), "1");
  EXPECT_EQ(transpose[1].at("nt_stores"), "1");
  EXPECT_EQ(transpose[1].at("block_c"), "64");
  EXPECT_EQ(transpose[1].at("prefetch_ahead"), "2");
  EXPECT_EQ(transpose[1].at("unroll_c"), "2");
  // Within the L2 (1 MiB) neither blocks nor prefetches are allowed, so the second
  // point (whose unrolling alone loses there) is not proposed.
  EXPECT_EQ(starts_for("transpose_2d:m=256,n=512:f32").size(), 1u);
}

// conv_2d_decomposed's start point: 16-wide filter tiles, tried second; where the
// default is already 16 (F = 48 gives way to 16 for the smallest rest) it adds nothing.
TEST(KnobSpace, Conv2dStartPointTriesSixteenWideFilterTiles) {
  auto starts_for = [](const std::string& key) {
    return StartingCandidates(TemplateSpace("conv_2d_decomposed", key));
  };
  std::vector<KnobValues> deep =
      starts_for("conv_2d_nhwc_hwcf:n=1,h=9,w=9,c=512,kh=3,kw=3,f=512,sh=1,sw=1,dh=1,dw=1:f32");
  ASSERT_EQ(deep.size(), 3u);
  EXPECT_EQ(deep[0].at("tile_f"), "32");
  EXPECT_EQ(deep[1].at("tile_f"), "16");
  EXPECT_EQ(deep[1].at("tile_ow"), deep[0].at("tile_ow"));
  EXPECT_EQ(deep[1].at("f_main"), "512");
  EXPECT_EQ(deep[1].at("tile_c1"), deep[0].at("tile_c1"));
  // The second: 64 channels per reduction chunk too.
  EXPECT_EQ(deep[2].at("tile_f"), "16");
  EXPECT_EQ(deep[2].at("tile_c1"), "64");
  EXPECT_EQ(starts_for("conv_2d_nhwc_hwcf:n=1,h=10,w=10,c=8,kh=3,kw=3,f=48,sh=1,sw=1,dh=1,dw=1:f32").size(),
            1u);
  // 32 channels: no 64-channel chunk, so the second point is the first. The third
  // (AVX2): 16-wide filter tiles of 6 output columns.
  std::vector<KnobValues> narrow =
      starts_for("conv_2d_nhwc_hwcf:n=1,h=36,w=36,c=32,kh=3,kw=3,f=32,sh=1,sw=1,dh=2,dw=2:f32");
  ASSERT_EQ(narrow.size(), 3u);
  EXPECT_EQ(narrow[2].at("tile_f"), "16");
  EXPECT_EQ(narrow[2].at("tile_ow"), "6");
  EXPECT_EQ(narrow[2].at("ow_main"), "30");
  // 9x9: a 6-wide tile would pad the 7 output columns by over an eighth, so the third
  // point keeps the default's 7 and is the first again.
  EXPECT_EQ(deep.size(), 3u);
}

// reduce_tiled's start points: a row sum's default is 4 bands of 1-row tiles, and
// its start point the same tiles without bands; a column sum (no bands) tries 1-row
// tiles after its 8-row default, then prefetches where its input reaches 4 MiB.
TEST(KnobSpace, ReduceStartPointsTryOneRowTilesNoBandsAndPrefetches) {
  std::vector<KnobValues> rows =
      StartingCandidates(TemplateSpace("reduce_tiled", "reduce_rows_2d:m=2048,n=4096:f32"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("tile_m"), "1");
  EXPECT_EQ(rows[0].at("bands"), "4");
  EXPECT_EQ(rows[1].at("tile_m"), "1");
  EXPECT_EQ(rows[1].at("bands"), "1");
  EXPECT_EQ(rows[1].at("split_reduction"), rows[0].at("split_reduction"));
  std::vector<KnobValues> cols =
      StartingCandidates(TemplateSpace("reduce_tiled", "reduce_cols_2d:m=2048,n=4096:f32"));
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_EQ(cols[0].at("tile_m"), "8");
  EXPECT_EQ(cols[0].at("prefetch_ahead"), "0");
  EXPECT_EQ(cols[1].at("tile_m"), "1");
  EXPECT_EQ(cols[1].at("bands"), "1");
  EXPECT_EQ(cols[2].at("tile_m"), "8");
  EXPECT_EQ(cols[2].at("prefetch_ahead"), "2");
  EXPECT_EQ(rows[0].at("prefetch_ahead"), "0") << "column sums only";
  // 1 MiB: no prefetch, so no third point.
  EXPECT_EQ(StartingCandidates(TemplateSpace("reduce_tiled", "reduce_cols_2d:m=512,n=512:f32")).size(), 2u);
}

// reduce_tiled's bands must divide m (the jammed band loops need equal bounds): the
// constraint prunes the others before any compile, and where 4 does not divide m the
// default falls to 2 bands, or to none.
TEST(KnobSpace, ReduceBandsDivideTheRows) {
  auto bands_of = [](const char* key) {
    KnobSpace space = TemplateSpace("reduce_tiled", key);
    std::optional<KnobValues> chosen = DefaultCandidate(space);
    return chosen ? chosen->at("bands") : std::string("none");
  };
  EXPECT_EQ(bands_of("reduce_rows_2d:m=4096,n=4096:f32"), "4");
  EXPECT_EQ(bands_of("reduce_rows_2d:m=1022,n=1025:f32"), "2");
  EXPECT_EQ(bands_of("reduce_rows_2d:m=1023,n=1025:f32"), "1");
  EXPECT_EQ(bands_of("reduce_cols_2d:m=4096,n=4096:f32"), "1");
  KnobSpace rows36 = TemplateSpace("reduce_tiled", "reduce_rows_2d:m=36,n=45:f32");
  KnobValues values = *DefaultCandidate(rows36);
  EXPECT_EQ(values.at("bands"), "4");
  EXPECT_TRUE(rows36.SatisfiesConstraints(values));
  values["bands"] = "8";  // 36 rows are not 8 bands
  EXPECT_FALSE(rows36.SatisfiesConstraints(values));
  EXPECT_NE(rows36.Check(values).message().find("violated by bands=8 (bands divide m)"), std::string::npos)
      << rows36.Check(values);
}

// depthwise_2d_decomposed's start points: one zmm of channels (16) where the default
// takes 32, and (AVX2) 16 channels by 4 output columns.
TEST(KnobSpace, DepthwiseStartPointTriesSixteenChannelTiles) {
  std::vector<KnobValues> wide = StartingCandidates(TemplateSpace(
      "depthwise_2d_decomposed", "depthwise_conv_2d_nhwc_hwc:n=1,h=114,w=114,c=64,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32"));
  ASSERT_EQ(wide.size(), 3u);
  EXPECT_EQ(wide[0].at("tile_c"), "32");
  EXPECT_EQ(wide[1].at("tile_c"), "16");
  EXPECT_EQ(wide[1].at("tile_ow"), wide[0].at("tile_ow"));
  // The second point (AVX2): 16 channels by 4 output columns.
  EXPECT_EQ(wide[2].at("tile_c"), "16");
  EXPECT_EQ(wide[2].at("tile_ow"), "4");
  // 16 channels: the default is already 16, so the point adds nothing.
  EXPECT_EQ(StartingCandidates(TemplateSpace("depthwise_2d_decomposed",
                                             "depthwise_conv_2d_nhwc_hwc:n=1,h=16,w=16,c=16,kh=3,kw=3,sh=1,sw=1,dh=1,dw=1:f32"))
                .size(),
            1u);
}

// matmul_bf16_vnni's start point: the whole of k as one cache tile (an odd k then
// pads one pair element once, not once per tile).
TEST(KnobSpace, VnniStartPointTakesTheWholeOfK) {
  std::vector<KnobValues> odd = StartingCandidates(TemplateSpace("matmul_bf16_vnni", "matmul:m=127,n=255,k=513:bf16"));
  ASSERT_EQ(odd.size(), 2u);
  EXPECT_EQ(odd[0].at("tile_k1"), "171");
  EXPECT_EQ(odd[1].at("tile_k1"), "513");
  EXPECT_EQ(odd[1].at("tile_n1"), odd[0].at("tile_n1"));
}

// The conv templates' tile_ow: 8 while its last tile pads the output row by at most an
// eighth; else the whole row when it is at most 16 wide, else the largest tile of
// 4 to 16 that pads least (never a 1- or 2-wide tile, though those pad nothing).
TEST(KnobSpace, ConvDefaultRowTileGivesWayToOneThatPadsLess) {
  auto default_for = [](const std::string& key) -> KnobValues {
    std::optional<KnobValues> values = DefaultCandidate(TemplateSpace(
        key.starts_with("conv_1d_nwc_wcf:") ? "conv_1d_tiled" : "conv_2d_decomposed", key));
    EXPECT_TRUE(values.has_value()) << key;
    return values.value_or(KnobValues{});
  };
  auto row_tile = [&](const std::string& key) {
    KnobValues values = default_for(key);
    return values["tile_ow"] + "/" + values["ow_main"];
  };
  auto conv2d = [](int hw, int c, const char* type) {
    return absl::StrCat("conv_2d_nhwc_hwcf:n=1,h=", hw, ",w=", hw, ",c=", c, ",kh=3,kw=3,f=", c,
                        ",sh=1,sw=1,dh=1,dw=1:", type);
  };
  EXPECT_EQ(row_tile(conv2d(58, 64, "f32")), "8/56");    // ow 56: whole tiles of 8
  EXPECT_EQ(row_tile(conv2d(56, 64, "f32")), "8/48");    // ow 54: the last tile pads 2 of 54
  EXPECT_EQ(row_tile(conv2d(9, 512, "f32")), "7/7");     // ow 7: 8 would pad 1 of 7
  EXPECT_EQ(row_tile(conv2d(16, 256, "f32")), "14/14");  // ow 14: 8 would pad 2 of 14
  EXPECT_EQ(row_tile(conv2d(30, 64, "f32")), "14/28");   // ow 28: 14 divides it
  EXPECT_EQ(row_tile(conv2d(19, 64, "f32")), "6/12");    // ow 17, a prime: 12 + 5 padded to 6
  EXPECT_EQ(row_tile("conv_1d_nwc_wcf:n=1,w=22,c=64,kw=3,f=64,sw=1,dw=1:f32"), "10/20");
  // f64: 7 x 32 accumulators and a filter row take all 32 registers (allowed, measured
  // faster than 7 x 16); 8 x 32 would need 36, so the repair narrows tile_f there.
  KnobValues f64 = default_for(conv2d(9, 512, "f64"));
  EXPECT_EQ(f64["tile_ow"], "7");
  EXPECT_EQ(f64["tile_f"], "32");
  KnobValues f64_wider = default_for(conv2d(10, 512, "f64"));
  EXPECT_EQ(f64_wider["tile_ow"], "8");
  EXPECT_EQ(f64_wider["tile_f"], "16");
}

// depthwise_2d_decomposed splits off partial tiles in ow and c, so its defaults only
// change where the usual tile (8 x 32) is wider than the dimension, which would pad.
TEST(KnobSpace, DepthwiseDefaultTilesAreNeverWiderThanTheirDimension) {
  auto tiles = [](int hw, int c) {
    const std::string key = absl::StrCat("depthwise_conv_2d_nhwc_hwc:n=1,h=", hw, ",w=", hw,
                                         ",c=", c, ",kh=3,kw=3:f32");
    std::optional<KnobValues> values = DefaultCandidate(TemplateSpace("depthwise_2d_decomposed", key));
    EXPECT_TRUE(values.has_value()) << key;
    KnobValues v = values.value_or(KnobValues{});
    return absl::StrCat(v["tile_ow"], "/", v["ow_main"], " ", v["tile_c"], "/", v["c_main"]);
  };
  EXPECT_EQ(tiles(58, 64), "8/56 32/64");   // ow 56, c 64: whole tiles
  EXPECT_EQ(tiles(60, 144), "8/56 32/128"); // ow 58, c 144: rests of 2 and 16 split off
  EXPECT_EQ(tiles(7, 64), "5/5 32/64");     // ow 5: the whole row
  EXPECT_EQ(tiles(9, 12), "7/7 12/12");     // c 12: all channels, an option only here
  EXPECT_EQ(tiles(9, 20), "7/7 16/16");     // c 20: not a 20-lane vector; 16 + 4 split off
  EXPECT_EQ(tiles(9, 37), "7/7 16/32");     // c 37: 32 counts as padding 27; 2 x 16 + 5 split off
}

// A column strip of depthwise_2d_decomposed is whole tiles that divide the whole-tile
// extent ow_main, and narrower than it; 0 (no strip) is always valid.
TEST(KnobSpace, DepthwiseStripsAreWholeTilesThatDivideTheRow) {
  // ow = 56; 4-wide tiles: strips of 8 and 28 (56 would be no strip, 16 and 12 cut a
  // strip or a tile).
  const KnobSpace space = TemplateSpace(
      "depthwise_2d_decomposed", "depthwise_conv_2d_nhwc_hwc:n=1,h=58,w=58,c=64,kh=3,kw=3:f32");
  KnobValues values = *DefaultCandidate(space);
  EXPECT_EQ(values.at("strip_ow"), "0");
  values["tile_ow"] = "4";
  std::vector<std::string> valid;
  for (const int64_t strip : {0, 4, 8, 12, 14, 16, 28, 56, 64}) {
    values["strip_ow"] = std::to_string(strip);
    if (SolveDerivedKnobs(space, values).has_value()) valid.push_back(std::to_string(strip));
  }
  EXPECT_EQ(absl::StrJoin(valid, ","), "0,4,8,28");
  // With 7-wide tiles 14 and 28 are whole tiles; 8 is not.
  values["tile_ow"] = "7";
  values["strip_ow"] = "14";
  EXPECT_TRUE(SolveDerivedKnobs(space, values).has_value());
  values["strip_ow"] = "8";
  EXPECT_FALSE(SolveDerivedKnobs(space, values).has_value());
}

// depthwise_1d_tiled pads a partial channel tile (no split): 32 lanes unless that
// pads the channels by more than an eighth, then the first of 32, 16, 8 that pads least.
TEST(KnobSpace, DepthwiseOneDimensionalChannelTilePadsAtMostWhatItMust) {
  auto tile_c = [](int c) {
    const std::string key = absl::StrCat("depthwise_conv_1d_nwc_wc:n=1,w=1026,c=", c, ",kw=3:f32");
    std::optional<KnobValues> values = DefaultCandidate(TemplateSpace("depthwise_1d_tiled", key));
    EXPECT_TRUE(values.has_value()) << key;
    return values.value_or(KnobValues{})["tile_c"];
  };
  EXPECT_EQ(tile_c(64), "32");
  EXPECT_EQ(tile_c(200), "32");  // pads 24, under an eighth
  EXPECT_EQ(tile_c(37), "8");    // 32 would pad 27
  EXPECT_EQ(tile_c(48), "16");   // 16 and 8 pad nothing: the first
  EXPECT_EQ(tile_c(100), "8");
}

TEST(KnobSpace, DivisibilityBetweenWordsAndNonUtf8TextAreErrors) {
  auto problem = ParseProblemKey("matmul:m=8,n=8,k=8:f32");
  ASSERT_TRUE(problem.ok());
  // Once threw std::invalid_argument from std::stoll (found by knob_space_fuzzer).
  auto words = ExtractKnobSpace(KnobLines(R"mlir(    %a = transform.tune.knob<"a"> = "x" from options = ["x", "y"] {mtune.divides = "b"} -> !transform.any_param
    %b = transform.tune.knob<"b"> = "z" from options = ["z"] -> !transform.any_param)mlir"), *problem);
  EXPECT_EQ(words.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(words.status().message().find("non-integer option"), std::string::npos) << words.status();
  // Once made the canonical JSON encoder throw (found by knob_space_fuzzer).
  auto bytes = ExtractKnobSpace(KnobLines(R"mlir(    %a = transform.tune.knob<"a"> options = ["ok", "\FF"] -> !transform.any_param)mlir"), *problem);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bytes.status().message().find("UTF-8"), std::string::npos) << bytes.status();
}

// The transformation choices of issue 3 that copy_tiled and reduce_tiled offer as
// alternatives: their labels and the template defaults (the defaults were measured
// side by side; see the templates' header comments).
TEST(KnobSpace, CopyAndReduceTemplatesOfferPeelingSplitReductionAndUnrolling) {
  auto find = [](const KnobSpace& space, const std::string& name) -> const KnobSpec* {
    for (const KnobSpec& k : space.knobs)
      if (k.name == name) return &k;
    return nullptr;
  };
  auto transpose = ParseProblemKey("transpose_2d:m=37,n=45:f32");
  ASSERT_TRUE(transpose.ok());
  auto copy_tpl = FindTemplate("copy_tiled");
  ASSERT_TRUE(copy_tpl.ok()) << copy_tpl.status();
  auto copy_space = ExtractKnobSpace(copy_tpl->text, *transpose);
  ASSERT_TRUE(copy_space.ok()) << copy_space.status();
  const KnobSpec* edge = find(*copy_space, "edge_tiles");
  ASSERT_NE(edge, nullptr);
  EXPECT_TRUE(edge->is_alternatives);
  EXPECT_EQ(edge->options, (std::vector<std::string>{"masked", "padded", "peeled"}));
  EXPECT_EQ(edge->default_value, "padded");
  const KnobSpec* unroll = find(*copy_space, "unroll_c");
  ASSERT_NE(unroll, nullptr);
  EXPECT_EQ(unroll->options, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(unroll->default_value, "1");
  EXPECT_EQ(find(*copy_space, "transpose_lowering")->options.size(), 4u);
  // A copy has no transpose to lower: one option, not four candidates of one code.
  auto plain_copy = ExtractKnobSpace(copy_tpl->text, *ParseProblemKey("copy_2d:m=37,n=45:f32"));
  ASSERT_TRUE(plain_copy.ok()) << plain_copy.status();
  EXPECT_EQ(find(*plain_copy, "transpose_lowering")->options, std::vector<std::string>{"shuffle_16x16"});
  // 1-row tiles are a copy's default and no transpose's option (they hang the
  // interpreter there); with them, edge_tiles and unroll_c stay at their defaults.
  EXPECT_EQ(find(*plain_copy, "tile_r")->options, (std::vector<std::string>{"1", "2", "4", "8", "16"}));
  EXPECT_EQ(find(*plain_copy, "tile_r")->default_value, "1");
  EXPECT_EQ(find(*plain_copy, "tile_c")->default_value, "64");
  EXPECT_EQ(find(*copy_space, "tile_r")->options, (std::vector<std::string>{"2", "4", "8", "16"}));
  KnobValues one_row = *DefaultCandidate(*plain_copy);
  one_row["unroll_c"] = "2";
  EXPECT_FALSE(plain_copy->SatisfiesConstraints(one_row));
  one_row["unroll_c"] = "1";
  one_row["edge_tiles"] = "masked";
  EXPECT_FALSE(plain_copy->SatisfiesConstraints(one_row));

  auto rows = ParseProblemKey("reduce_rows_2d:m=1023,n=1025:f32");
  ASSERT_TRUE(rows.ok());
  auto reduce_tpl = FindTemplate("reduce_tiled");
  ASSERT_TRUE(reduce_tpl.ok()) << reduce_tpl.status();
  auto reduce_space = ExtractKnobSpace(reduce_tpl->text, *rows);
  ASSERT_TRUE(reduce_space.ok()) << reduce_space.status();
  const KnobSpec* split = find(*reduce_space, "split_reduction");
  ASSERT_NE(split, nullptr);
  EXPECT_TRUE(split->is_alternatives);
  EXPECT_EQ(split->options, (std::vector<std::string>{"none", "4", "8", "16", "32"}));
  EXPECT_EQ(split->default_value, "32");
  const KnobSpec* lowering = find(*reduce_space, "reduction_lowering");
  ASSERT_NE(lowering, nullptr);
  EXPECT_EQ(lowering->options, (std::vector<std::string>{"innerparallel", "innerreduction"}));
  EXPECT_EQ(lowering->default_value, "innerreduction");
  // Every split instantiates (the helper sequences travel with the script).
  for (const std::string& option : split->options) {
    KnobValues values = *DefaultCandidate(*reduce_space);
    values["split_reduction"] = option;
    auto script = Instantiate(reduce_tpl->text, *rows, values);
    ASSERT_TRUE(script.ok()) << option << ": " << script.status();
    if (option != "none") {
      EXPECT_NE(script->find("tile_reduction_using_for"), std::string::npos) << option;
    }
  }
  // A column sum has one option each for the choices only row sums have: every split
  // region compiles it as `none`, and innerreduction would transpose every tile.
  auto cols = ParseProblemKey("reduce_cols_2d:m=1023,n=1025:f32");
  ASSERT_TRUE(cols.ok());
  auto cols_space = ExtractKnobSpace(reduce_tpl->text, *cols);
  ASSERT_TRUE(cols_space.ok()) << cols_space.status();
  EXPECT_EQ(find(*cols_space, "split_reduction")->options, (std::vector<std::string>{"none"}));
  EXPECT_EQ(find(*cols_space, "reduction_lowering")->options, (std::vector<std::string>{"innerparallel"}));
  EXPECT_EQ(find(*cols_space, "reduction_lowering")->default_value, "innerparallel");
}

// copy_tiled's blocks for transposes and streaming stores: options, defaults, and
// the footprint / alignment constraint that decides the default candidate per problem
// (measured: both pay off only beyond the L2; see the template).
TEST(KnobSpace, CopyTemplateBlocksTransposesAndStreamsStoresBeyondTheL2) {
  auto space_for = [](const std::string& key) { return TemplateSpace("copy_tiled", key); };
  const KnobSpace big = space_for("transpose_2d:m=2048,n=4096:f32");
  std::map<std::string, const KnobSpec*> by_name;
  for (const KnobSpec& k : big.knobs) by_name[k.name] = &k;
  ASSERT_TRUE(by_name.contains("block_r") && by_name.contains("block_c") && by_name.contains("nt_stores"));
  EXPECT_EQ(by_name["block_r"]->options, (std::vector<std::string>{"0", "256", "512", "1024"}));
  EXPECT_EQ(by_name["block_r"]->default_value, "512");
  EXPECT_EQ(by_name["block_c"]->options, (std::vector<std::string>{"0", "16", "32", "64"}));
  EXPECT_EQ(by_name["block_c"]->default_value, "64");
  EXPECT_EQ(by_name["prefetch_ahead"]->options, (std::vector<std::string>{"0", "2", "4", "8"}));
  EXPECT_EQ(by_name["prefetch_ahead"]->default_value, "2");
  EXPECT_EQ(by_name["nt_stores"]->options, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(by_name["nt_stores"]->default_value, "1");

  struct Expect {
    std::string key, block_c, nt_stores, prefetch_ahead, block_r = "512";
  };
  for (const Expect& e : std::vector<Expect>{
           {"transpose_2d:m=2048,n=4096:f32", "64", "1", "2"},  // 64 MiB: as written
           {"transpose_2d:m=512,n=1024:f32", "64", "1", "2"},   // 4 MiB: just beyond the L2
           {"transpose_2d:m=256,n=512:f32", "0", "0", "0"},     // 1 MiB: within the L2
           {"transpose_2d:m=255,n=511:f32", "0", "0", "0"},     // and rows of odd length
           {"transpose_2d:m=1023,n=1025:f32", "64", "0", "0"},  // rows not multiples of 16
           {"transpose_2d:m=1000,n=1048:f32", "64", "0", "0"},  // 1000: a multiple of 8, not 16
           {"transpose_2d:m=65536,n=16:f32", "64", "1", "0"},   // one row of 16x16 tiles
           {"copy_2d:m=37,n=45:f32", "0", "0", "0", "0"},       // copies: never blocked
           {"copy_2d:m=2048,n=4096:f32", "0", "0", "0", "0"}}) {
    const KnobSpace space = space_for(e.key);
    std::optional<KnobValues> chosen = DefaultCandidate(space);
    ASSERT_TRUE(chosen.has_value()) << e.key;
    EXPECT_EQ((*chosen)["block_c"], e.block_c) << e.key;
    EXPECT_EQ((*chosen)["nt_stores"], e.nt_stores) << e.key;
    EXPECT_EQ((*chosen)["prefetch_ahead"], e.prefetch_ahead) << e.key;
    EXPECT_EQ((*chosen)["block_r"], e.block_r) << e.key;
    // The constraints prune the template's own values where they do not apply.
    EXPECT_EQ(space.Defaults().has_value(), e.block_c == "64" && e.nt_stores == "1" && e.prefetch_ahead == "2")
        << e.key;
  }
  // For copies the blocks have one option each (mtune.only_for): no duplicate
  // candidates. Streaming stores are a choice that starts off (they win only beyond
  // the L3, which the constraint cannot see), under the transposes' constraint.
  const KnobSpace copy = space_for("copy_2d:m=2048,n=4096:f32");
  for (const KnobSpec& k : copy.knobs) {
    if (k.name == "block_r" || k.name == "block_c") {
      EXPECT_EQ(k.options, std::vector<std::string>{"0"}) << k.name;
    }
    if (k.name == "nt_stores") {
      EXPECT_EQ(k.options, (std::vector<std::string>{"0", "1"}));
    }
  }
  KnobValues streamed = *DefaultCandidate(copy);
  streamed["nt_stores"] = "1";
  EXPECT_TRUE(copy.SatisfiesConstraints(streamed));
  const KnobSpace small_copy = space_for("copy_2d:m=256,n=512:f32");
  streamed = *DefaultCandidate(small_copy);
  streamed["nt_stores"] = "1";
  EXPECT_FALSE(small_copy.SatisfiesConstraints(streamed));
  const KnobSpace odd = space_for("transpose_2d:m=1000,n=1023:f32");
  KnobValues values = *DefaultCandidate(odd);
  values["nt_stores"] = "1";
  EXPECT_FALSE(odd.SatisfiesConstraints(values));
  values["nt_stores"] = "0";
  EXPECT_TRUE(odd.SatisfiesConstraints(values));
}

// copy_tiled's edge handling is a choice only where some tile is partial: a tile
// that does not divide its dimension of the output, or a block narrower than the
// dimension that the tile does not divide (partial_tiles, derived). Elsewhere its
// three choices make the same code and only the default is a candidate.
TEST(KnobSpace, CopyTemplateChoosesEdgeTilesOnlyWherePartialTilesExist) {
  auto space_for = [](const std::string& key) { return TemplateSpace("copy_tiled", key); };
  auto with = [](const KnobSpace& space, KnobValues values, const KnobValues& changes) {
    for (const auto& [name, value] : changes) values[name] = value;
    return SolveDerivedKnobs(space, values);  // nullopt: no valid candidate
  };
  // 256 x 512 (output 512 x 256): every power-of-two tile divides.
  const KnobSpace round = space_for("transpose_2d:m=256,n=512:f32");
  const KnobValues round_default = *DefaultCandidate(round);
  EXPECT_EQ(round_default.at("partial_tiles"), "0");
  EXPECT_EQ(round_default.at("edge_tiles"), "padded");
  EXPECT_FALSE(with(round, round_default, {{"edge_tiles", "masked"}}).has_value());
  EXPECT_FALSE(with(round, round_default, {{"edge_tiles", "peeled"}}).has_value());

  // 100 x 37 (output 37 x 100): 16-row tiles leave 5 rows.
  const KnobSpace odd = space_for("transpose_2d:m=100,n=37:f32");
  const KnobValues odd_default = *DefaultCandidate(odd);
  EXPECT_EQ(odd_default.at("partial_tiles"), "1");
  for (const char* edge : {"masked", "padded", "peeled"}) {
    auto chosen = with(odd, odd_default, {{"edge_tiles", edge}});
    ASSERT_TRUE(chosen.has_value()) << edge;
    EXPECT_EQ(chosen->at("partial_tiles"), "1");
  }
  // Even with 2-row tiles and 4-wide columns, 37 rows leave one.
  auto two_rows = with(odd, odd_default, {{"tile_r", "2"}, {"edge_tiles", "masked"}});
  ASSERT_TRUE(two_rows.has_value());

  // 1024 x 1024: a 64-wide tile in 16- or 32-wide blocks of columns is cut by them.
  const KnobSpace big = space_for("transpose_2d:m=1024,n=1024:f32");
  KnobValues blocked = *DefaultCandidate(big);
  blocked["tile_c"] = "64";
  blocked["block_c"] = "32";
  blocked["edge_tiles"] = "masked";
  blocked["prefetch_ahead"] = "0";  // prefetches only on whole tiles
  auto cut = SolveDerivedKnobs(big, blocked);
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->at("partial_tiles"), "1");
  blocked["block_c"] = "64";
  EXPECT_FALSE(SolveDerivedKnobs(big, blocked).has_value()) << "64 | 64: nothing to mask";

  // Copies (output m x n) alike: 64-wide rows of 37 columns are partial, of 512 not.
  EXPECT_EQ(DefaultCandidate(space_for("copy_2d:m=100,n=37:f32"))->at("partial_tiles"), "1");
  EXPECT_EQ(DefaultCandidate(space_for("copy_2d:m=256,n=512:f32"))->at("partial_tiles"), "0");
}

TEST(KnobSpace, OnlyForFixesAKnobForOtherFamilies) {
  const char* knob =
      R"k(%a = transform.tune.knob<"a"> = 4 from options = [1, 4] {mtune.only_for = ["transpose_2d"], mtune.otherwise = 1 : i64} -> !transform.param<i64>)k";
  auto transpose = ExtractKnobSpace(KnobLines(knob), *ParseProblemKey("transpose_2d:m=8,n=8:f32"));
  ASSERT_TRUE(transpose.ok()) << transpose.status();
  EXPECT_EQ(transpose->knobs[0].options, (std::vector<std::string>{"1", "4"}));
  auto copy = ExtractKnobSpace(KnobLines(knob), *ParseProblemKey("copy_2d:m=8,n=8:f32"));
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(copy->knobs[0].options, std::vector<std::string>{"1"});
  auto script = Instantiate(KnobLines(knob), *ParseProblemKey("copy_2d:m=8,n=8:f32"), {{"a", "1"}});
  ASSERT_TRUE(script.ok()) << script.status();
  EXPECT_NE(script->find("options = [1]"), std::string::npos) << *script;
  // `otherwise` must be given, and be one of the options.
  for (const char* bad : {
           R"k(%a = transform.tune.knob<"a"> options = [1, 4] {mtune.only_for = ["copy_2d"]} -> !transform.param<i64>)k",
           R"k(%a = transform.tune.knob<"a"> options = [1, 4] {mtune.only_for = ["copy_2d"], mtune.otherwise = 2 : i64} -> !transform.param<i64>)k"}) {
    auto space = ExtractKnobSpace(KnobLines(bad), *ParseProblemKey("transpose_2d:m=8,n=8:f32"));
    EXPECT_NE(space.status().message().find("needs mtune.otherwise"), std::string::npos) << bad;
  }
}

TEST(KnobSpace, DefaultForGivesAFamilyItsOwnDefault) {
  const char* knob =
      R"k(%a = transform.tune.knob<"a"> = 8 from options = [4, 8] {mtune.default_for = {reduce_rows_2d = 4 : i64}} -> !transform.param<i64>)k";
  auto rows = ExtractKnobSpace(KnobLines(knob), *ParseProblemKey("reduce_rows_2d:m=8,n=8:f32"));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->knobs[0].default_value, "4");
  auto cols = ExtractKnobSpace(KnobLines(knob), *ParseProblemKey("reduce_cols_2d:m=8,n=8:f32"));
  ASSERT_TRUE(cols.ok()) << cols.status();
  EXPECT_EQ(cols->knobs[0].default_value, "8");
  // On alternatives, by label.
  const std::string alternatives = KnobLines(
      "    transform.tune.alternatives<\"p\"> selected_region = 0 attributes {mtune.labels = "
      "[\"no\", \"yes\"], mtune.default_for = {copy_2d = \"yes\"}} {\n    transform.yield\n    }, {\n"
      "    transform.yield\n    }");
  auto copy = ExtractKnobSpace(alternatives, *ParseProblemKey("copy_2d:m=8,n=8:f32"));
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(copy->knobs[0].default_value, "yes");
  auto transpose = ExtractKnobSpace(alternatives, *ParseProblemKey("transpose_2d:m=8,n=8:f32"));
  ASSERT_TRUE(transpose.ok()) << transpose.status();
  EXPECT_EQ(transpose->knobs[0].default_value, "no");
  // A value that is not an option, and an attribute that is not a dictionary, are errors.
  for (const char* bad : {
           R"k(%a = transform.tune.knob<"a"> = 8 from options = [4, 8] {mtune.default_for = {reduce_rows_2d = 2 : i64}} -> !transform.param<i64>)k",
           R"k(%a = transform.tune.knob<"a"> = 8 from options = [4, 8] {mtune.default_for = ["reduce_rows_2d"]} -> !transform.param<i64>)k"}) {
    auto space = ExtractKnobSpace(KnobLines(bad), *ParseProblemKey("reduce_rows_2d:m=8,n=8:f32"));
    EXPECT_NE(space.status().message().find("mtune.default_for"), std::string::npos) << bad;
  }
}

// mtune.splits: a split factor wider than the dimension it splits is no option; the
// default then falls to the largest factor left, else to the first other label.
TEST(KnobSpace, SplitsWiderThanTheDimensionAreNoOptions) {
  auto space_for = [](const std::string& key, const std::string& dim) {
    return ExtractKnobSpace(
        KnobLines("    transform.tune.alternatives<\"s\"> selected_region = 3 attributes {mtune.labels = "
                  "[\"none\", \"4\", \"8\", \"32\"], mtune.splits = \"" + dim +
                  "\"} {\n    transform.yield\n    }, {\n    transform.yield\n    }, {\n"
                  "    transform.yield\n    }, {\n    transform.yield\n    }"),
        *ParseProblemKey(key));
  };
  auto wide = space_for("reduce_rows_2d:m=64,n=100:f32", "n");
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->knobs[0].options, (std::vector<std::string>{"none", "4", "8", "32"}));
  EXPECT_EQ(wide->knobs[0].default_value, "32");
  auto eight = space_for("reduce_rows_2d:m=64,n=8:f32", "n");
  ASSERT_TRUE(eight.ok()) << eight.status();
  EXPECT_EQ(eight->knobs[0].options, (std::vector<std::string>{"none", "4", "8"}));
  EXPECT_EQ(eight->knobs[0].default_value, "8");
  auto three = space_for("reduce_rows_2d:m=64,n=3:f32", "n");
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->knobs[0].options, std::vector<std::string>{"none"});
  EXPECT_EQ(three->knobs[0].default_value, "none");
  EXPECT_EQ(space_for("reduce_rows_2d:m=64,n=8:f32", "q").status().code(), absl::StatusCode::kInvalidArgument);
}

// mtune.only_with: reduce_tiled's tile_n is read only without a split, so with a split
// it is held at its default: 4 splits x 6 row tiles x 2 lowerings plus 6 x 5 x 2
// unsplit candidates, not 5 x 6 x 5 x 2 of which 192 would repeat others' code (and,
// m being odd, only one band of the 4 band counts: 1200 combinations).
TEST(KnobSpace, OnlyWithHoldsAKnobAtItsDefaultWhereItIsNotRead) {
  auto tpl = FindTemplate("reduce_tiled");
  ASSERT_TRUE(tpl.ok()) << tpl.status();
  auto space = ExtractKnobSpace(tpl->text, *ParseProblemKey("reduce_rows_2d:m=1023,n=1025:f32"));
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_EQ(space->Size(), 1200u);
  size_t valid = 0;
  for (uint64_t n = 0; n < space->Size(); ++n) {
    KnobValues values;
    uint64_t rest = n;
    for (const KnobSpec& k : space->knobs) {
      values[k.name] = k.options[rest % k.options.size()];
      rest /= k.options.size();
    }
    valid += space->SatisfiesConstraints(values);
  }
  EXPECT_EQ(valid, 108u);
  KnobValues split = *DefaultCandidate(*space);
  split["tile_n"] = "64";
  EXPECT_NE(space->Check(split).message().find("only matters when split_reduction is none"), std::string::npos)
      << space->Check(split);
  split["split_reduction"] = "none";
  EXPECT_TRUE(space->Check(split).ok()) << space->Check(split);
  // The knob named must be another knob of the template, and the values a list.
  for (const char* bad : {
           R"k(%a = transform.tune.knob<"a"> = 4 from options = [1, 4] {mtune.only_with = {b = ["x"]}} -> !transform.param<i64>)k",
           R"k(%a = transform.tune.knob<"a"> = 4 from options = [1, 4] {mtune.only_with = {a = [1]}} -> !transform.param<i64>)k",
           R"k(%a = transform.tune.knob<"a"> = 4 from options = [1, 4] {mtune.only_with = ["b"]} -> !transform.param<i64>)k"}) {
    auto status = ExtractKnobSpace(KnobLines(bad), *ParseProblemKey("copy_2d:m=8,n=8:f32"));
    EXPECT_NE(status.status().message().find("mtune.only_with"), std::string::npos) << bad;
  }
  // On an alternatives op the error names it as one.
  auto alternatives = ExtractKnobSpace(
      KnobLines("    transform.tune.alternatives<\"p\"> selected_region = 0 attributes {mtune.labels = "
                "[\"no\", \"yes\"], mtune.only_with = {q = [1]}} {\n    transform.yield\n    }, {\n"
                "    transform.yield\n    }"),
      *ParseProblemKey("copy_2d:m=8,n=8:f32"));
  EXPECT_NE(alternatives.status().message().find("alternatives 'p': mtune.only_with names knob 'q'"),
            std::string::npos)
      << alternatives.status();
}

TEST(KnobSpace, OptionFamiliesDropAKnobValueForOtherFamilies) {
  auto knob = [](const std::string& attrs) {
    return KnobLines(R"k(    %a = transform.tune.knob<"tile_r"> = 16 from options = [1, 2, 16] {)k" + attrs +
                     R"k(} -> !transform.param<i64>)k");
  };
  const std::string restricted =
      knob(R"(mtune.option_families = {"1" = ["copy_2d"]}, mtune.default_for = {copy_2d = 1 : i64})");
  const Problem copy = *ParseProblemKey("copy_2d:m=8,n=8:f32");
  const Problem transpose = *ParseProblemKey("transpose_2d:m=8,n=8:f32");
  auto copies = ExtractKnobSpace(restricted, copy);
  ASSERT_TRUE(copies.ok()) << copies.status();
  EXPECT_EQ(copies->knobs[0].options, (std::vector<std::string>{"1", "2", "16"}));
  EXPECT_EQ(copies->knobs[0].default_value, "1");
  auto transposes = ExtractKnobSpace(restricted, transpose);
  ASSERT_TRUE(transposes.ok()) << transposes.status();
  EXPECT_EQ(transposes->knobs[0].options, (std::vector<std::string>{"2", "16"}));
  EXPECT_EQ(transposes->knobs[0].default_value, "16");
  // The instantiated script offers the family's options only, and a value of
  // another family is refused before any script is made.
  auto script = Instantiate(restricted, transpose, {{"tile_r", "2"}});
  ASSERT_TRUE(script.ok()) << script.status();
  EXPECT_NE(script->find("options = [2, 16]"), std::string::npos) << *script;
  EXPECT_FALSE(Instantiate(restricted, transpose, {{"tile_r", "1"}}).ok());
  // Bad uses are refused: a value that is no option, a restricted default, a value
  // that is not a list of family names, and options written as a form.
  for (const std::string& bad :
       {knob(R"(mtune.option_families = {"4" = ["copy_2d"]})"),
        knob(R"(mtune.option_families = {"16" = ["copy_2d"]})"),
        knob(R"(mtune.option_families = {"1" = "copy_2d"})"),
        KnobLines(R"k(    %a = transform.tune.knob<"a"> = 2 from options = "pow2(1, 4)" {mtune.option_families = {"1" = ["copy_2d"]}} -> !transform.param<i64>)k")}) {
    auto space = ExtractKnobSpace(bad, transpose);
    EXPECT_EQ(space.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(space.status().message().find("mtune.option_families"), std::string::npos)
        << space.status();
  }
}

TEST(KnobSpace, LabelTypesDropARegionForOtherElementTypes) {
  auto lowering = [](const std::string& label_types) {
    return KnobLines(
        "    transform.tune.alternatives<\"lower\"> selected_region = 0 attributes {mtune.labels = "
        "[\"outer\", \"dot\"], mtune.label_types = " +
        label_types + "} {\n    transform.yield\n    }, {\n    transform.yield\n    }");
  };
  const std::string restricted = lowering(R"({dot = ["f32", "f64"]})");
  auto f32 = ExtractKnobSpace(restricted, *ParseProblemKey("matmul:m=8,n=8,k=8:f32"));
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_EQ(f32->knobs[0].options, (std::vector<std::string>{"outer", "dot"}));
  auto bf16 = ExtractKnobSpace(restricted, *ParseProblemKey("matmul:m=8,n=8,k=8:bf16"));
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(bf16->knobs[0].options, std::vector<std::string>{"outer"});
  // The default region stays an option for every element type.
  auto refused = ExtractKnobSpace(lowering(R"({outer = ["f32"]})"), *ParseProblemKey("matmul:m=8,n=8,k=8:f32"));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("must be an option for every element type (mtune.label_types)"),
            std::string::npos)
      << refused.status();
}

// An instantiated script, read back as a template, has the candidate's values as
// its defaults: the rules that pick a default or the options per problem are not
// carried into it (a 64-wide channel tile of a 16-channel depthwise convolution read
// back as 16; an f32 matmul's `dot` lowering, which bf16 lacks, was refused).
TEST(KnobSpace, AnInstantiatedScriptSelectsItsCandidate) {
  struct Case {
    const char* template_name;
    const char* key;
    KnobValues changes;
  };
  // 4 rows of 64 channels: 16 zmm, what the register constraint allows.
  for (const Case& c : {Case{"depthwise_1d_tiled", "depthwise_conv_1d_nwc_wc:n=1,w=34,c=16,kw=3,sw=1,dw=1:f32",
                             {{"tile_c", "64"}, {"tile_ow", "4"}}},
                        Case{"matmul_2level", "matmul:m=96,n=80,k=64:f32",
                             {{"contraction_lowering", "dot"}}}}) {
    SCOPED_TRACE(c.key);
    auto problem = ParseProblemKey(c.key);
    ASSERT_TRUE(problem.ok());
    auto tpl = FindTemplate(c.template_name);
    ASSERT_TRUE(tpl.ok()) << tpl.status();
    auto space = ExtractKnobSpace(tpl->text, *problem);
    ASSERT_TRUE(space.ok()) << space.status();
    std::optional<KnobValues> values = DefaultCandidate(*space);
    ASSERT_TRUE(values.has_value());
    for (const auto& [name, value] : c.changes) {
      ASSERT_NE((*values)[name], value) << name << " is already the default";
      (*values)[name] = value;
    }
    auto script = Instantiate(tpl->text, *problem, *values);
    ASSERT_TRUE(script.ok()) << script.status();
    auto again = ExtractKnobSpace(*script, *problem);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->Defaults(), values);
  }
}

TEST(KnobSpace, LabelFamiliesDropARegionForOtherFamilies) {
  auto alternatives = [](const std::string& attrs) {
    return KnobLines(
        "    transform.tune.alternatives<\"p\"> selected_region = 0 attributes {mtune.labels = "
        "[\"no\", \"yes\", \"only\"], " +
        attrs + "} {\n    transform.yield\n    }, {\n    transform.yield\n    }, {\n"
                "    transform.yield\n    }");
  };
  const std::string restricted = alternatives(R"(mtune.label_families = {only = ["matmul"]})");
  auto matmul = ExtractKnobSpace(restricted, *ParseProblemKey("matmul:m=8,n=8,k=8:f32"));
  ASSERT_TRUE(matmul.ok()) << matmul.status();
  EXPECT_EQ(matmul->knobs[0].options, (std::vector<std::string>{"no", "yes", "only"}));
  const Problem other = *ParseProblemKey("matmul_transpose_b:m=8,n=8,k=8:f32");
  auto transposed = ExtractKnobSpace(restricted, other);
  ASSERT_TRUE(transposed.ok()) << transposed.status();
  EXPECT_EQ(transposed->knobs[0].options, (std::vector<std::string>{"no", "yes"}));
  EXPECT_EQ(transposed->knobs[0].default_value, "no");
  // Bad uses are refused: an unknown label, a value that is not a list of family
  // names, and a restricted default region.
  for (const char* bad : {R"(mtune.label_families = {maybe = ["matmul"]})",
                          R"(mtune.label_families = {only = "matmul"})",
                          R"(mtune.label_families = {only = [1]})",
                          R"(mtune.label_families = {no = ["matmul"]})"}) {
    auto space = ExtractKnobSpace(alternatives(bad), other);
    EXPECT_EQ(space.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(space.status().message().find("mtune.label_families"), std::string::npos)
        << space.status();
  }
  // mtune.only_for applies to alternatives as to knobs.
  auto fixed = ExtractKnobSpace(alternatives(R"(mtune.only_for = ["matmul"], mtune.otherwise = "yes")"),
                                other);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(fixed->knobs[0].options, std::vector<std::string>{"yes"});
  EXPECT_EQ(fixed->knobs[0].default_value, "yes");
  // Its errors name the alternatives as such.
  auto unlisted = ExtractKnobSpace(alternatives(R"(mtune.only_for = ["matmul"], mtune.otherwise = "maybe")"),
                                   other);
  EXPECT_EQ(unlisted.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unlisted.status().message().find("alternatives '"), std::string::npos) << unlisted.status();
  EXPECT_NE(unlisted.status().message().find("needs mtune.otherwise"), std::string::npos)
      << unlisted.status();
}

TEST(TemplateInstantiator, SplicedScriptsEqualInstantiateForEveryBuiltinTemplate) {
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"matmul:m=96,n=80,k=64:f32", "matmul_2level"},
           {"matmul:m=512,n=256,k=1024:f32", "matmul_packed"},
           {"transpose_2d:m=100,n=37:f32", "copy_tiled"},
           {"reduce_cols_2d:m=64,n=300:f32", "reduce_tiled"}}) {
    auto problem = ParseProblemKey(key);
    ASSERT_TRUE(problem.ok());
    auto tpl = FindTemplate(name);
    ASSERT_TRUE(tpl.ok()) << tpl.status();
    auto instantiator = TemplateInstantiator::Create(tpl->text, *problem);
    ASSERT_TRUE(instantiator.ok()) << instantiator.status();
    EXPECT_TRUE(instantiator->fast()) << name << " fell back to re-printing";
    // Candidates walking every option of every knob (one knob varies at a time).
    const KnobSpace& space = instantiator->space();
    KnobValues base;
    for (const auto& k : space.knobs) base[k.name] = k.options.front();
    int compared = 0;
    for (const auto& k : space.knobs) {
      for (const auto& option : k.options) {
        KnobValues values = base;
        values[k.name] = option;
        auto slow = Instantiate(tpl->text, *problem, values);
        auto fast = instantiator->Instantiate(values);
        ASSERT_EQ(slow.ok(), fast.ok()) << name << ": " << slow.status() << " / " << fast.status();
        if (slow.ok()) {
          EXPECT_EQ(*fast, *slow) << name;
          ++compared;
        }
      }
    }
    EXPECT_GT(compared, 0) << name;
    KnobValues unknown = base;
    unknown["no_such_knob"] = "1";
    EXPECT_EQ(instantiator->Instantiate(unknown).status().code(), absl::StatusCode::kInvalidArgument);
  }
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
