// The template policy (strategies/template_policy.h), through ExtractKnobSpace:
// the door every template passes, built in or from a file.
#include "strategies/template_policy.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "strategies/knob_space.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"
#include "strategies/test_examples.h"

namespace mtune::strategies {
namespace {

// A template around `body` (ops of @__transform_main) and `extra` (module-level ops).
std::string Template(const std::string& body, const std::string& extra = "") {
  return "module attributes {transform.with_named_sequence} {\n" + extra +
         "  transform.named_sequence @__transform_main(%root: !transform.any_op "
         "{transform.consumed}) {\n" +
         body + "    transform.yield\n  }\n}\n";
}

absl::Status Check(const std::string& text) {
  auto problem = ParseProblemKey("matmul:m=64,n=64,k=64:f32");
  EXPECT_TRUE(problem.ok());
  return ExtractKnobSpace(text, *problem).status();
}

void ExpectRejected(const std::string& text, const std::string& op, const std::string& why) {
  absl::Status status = Check(text);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("op '" + op + "'"), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find(why), absl::string_view::npos) << status;
}

TEST(TemplatePolicy, EveryBuiltinTemplateIsAllowed) {
  ASSERT_FALSE(BuiltinTemplates().empty());
  for (const StrategyTemplate& t : BuiltinTemplates()) {
    // The example problem of the first family the template tunes (its knobs may
    // name that family's dimensions, e.g. "pow2(8, c)").
    std::string example;
    for (const FamilyInfo& family : Families())
      if (example.empty() && t.TunesFamily(family.name)) example = family.example;
    ASSERT_FALSE(example.empty()) << t.name << " tunes no known family";
    auto problem = ExampleProblemFor(t, example);
    ASSERT_TRUE(problem.ok()) << problem.status();
    auto space = ExtractKnobSpace(t.text, *problem);
    EXPECT_TRUE(space.ok()) << t.name << ": " << space.status();
  }
}

TEST(TemplatePolicy, PlainTransformScriptsAndLocalIncludesAreAllowed) {
  EXPECT_TRUE(Check(Template(
                  "    %m = transform.structured.match ops{[\"linalg.matmul\"]} in %root "
                  ": (!transform.any_op) -> !transform.any_op\n"
                  "    %t = transform.tune.knob<\"tile\"> = 8 from options = [4, 8] "
                  "-> !transform.param<i64>\n"
                  "    transform.include @helper failures(propagate) (%m) "
                  ": (!transform.any_op) -> ()\n",
                  "  transform.named_sequence @helper(%op: !transform.any_op {transform.readonly}) {\n"
                  "    transform.yield\n  }\n"))
                  .ok());
}

TEST(TemplatePolicy, OpsOutsideTheAllowedDialectsAreRejected) {
  ExpectRejected(Template("", "  func.func @f() { return }\n"), "func.func",
                 "outside the allowed dialects");
  ExpectRejected(Template("", "  \"llvm.func\"() ({}) {sym_name = \"system\", function_type = "
                              "!llvm.func<i32 (ptr)>} : () -> ()\n"),
                 "llvm.func", "outside the allowed dialects");
  ExpectRejected(Template("", "  %c = smt.int.constant 1\n"), "smt.int.constant",
                 "outside transform.smt.constrain_params");
}

TEST(TemplatePolicy, PrintingAndArbitraryPassesAreRejected) {
  ExpectRejected(Template("    transform.print %root {name = \"leak\"} : !transform.any_op\n"),
                 "transform.print", "beyond the payload");
  ExpectRejected(
      Template("    %f = transform.structured.match ops{[\"func.func\"]} in %root "
               ": (!transform.any_op) -> !transform.any_op\n"
               "    %s = transform.apply_registered_pass \"snapshot-op-locations\" "
               "with options = { filename = \"/tmp/x\" } to %f "
               ": (!transform.any_op) -> !transform.any_op\n"),
      "transform.apply_registered_pass", "beyond the payload");
  // mtune's own passes are the exceptions, but not with options.
  for (const char* pass : {"mtune-rotate-tiles", "mtune-flatten-transfers", "mtune-prefetch-reads"}) {
    const std::string run =
        "    %f = transform.structured.match ops{[\"func.func\"]} in %root "
        ": (!transform.any_op) -> !transform.any_op\n"
        "    %s = transform.apply_registered_pass \"%PASS%\" %OPTIONS%to %f "
        ": (!transform.any_op) -> !transform.any_op\n";
    EXPECT_TRUE(Check(Template(absl::StrReplaceAll(run, {{"%PASS%", pass}, {"%OPTIONS%", ""}}))).ok())
        << pass;
    ExpectRejected(Template(absl::StrReplaceAll(
                       run, {{"%PASS%", pass}, {"%OPTIONS%", "with options = { x = 1 } "}})),
                   "transform.apply_registered_pass", "beyond the payload");
  }
}

TEST(TemplatePolicy, SequencesWithoutABodyAreRejected) {
  // Declared only: the interpreter would resolve it from an external library.
  ExpectRejected(
      Template("    transform.include @external failures(propagate) (%root) "
               ": (!transform.any_op) -> ()\n",
               "  transform.named_sequence private @external(%op: !transform.any_op "
               "{transform.readonly})\n"),
      "transform.named_sequence", "without a body");
}

TEST(TemplatePolicy, OversizedTemplatesAreRejectedBeforeParsing) {
  std::string huge = Template("") + "// " + std::string(kMaxTemplateBytes, 'x') + "\n";
  absl::Status status = Check(huge);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("larger than the limit"), absl::string_view::npos) << status;
}

// 100,000 nested `[` in a 200 KB template overflowed the parser's stack (found by
// the knob_space fuzzer): nesting is bounded before parsing.
TEST(TemplatePolicy, DeeplyNestedTemplatesAreRejectedBeforeParsing) {
  const int depth = 100000;
  const std::string deep = Template("", "  transform.named_sequence @deep() attributes {x = " +
                                            std::string(depth, '[') + std::string(depth, ']') +
                                            "} {\n    transform.yield\n  }\n");
  absl::Status status = Check(deep);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("nests brackets more than 256 deep"), absl::string_view::npos)
      << status;

  // Brackets in comments and string literals nest nothing; 256 levels are allowed.
  const std::string nested_attr = std::string(250, '[') + std::string(250, ']');
  const std::string fine =
      "// " + std::string(1000, '[') + "\n" +
      Template("", "  transform.named_sequence @quoted() attributes {s = \"" +
                       std::string(1000, '{') + "\\\"\", x = " + nested_attr +
                       "} {\n    transform.yield\n  }\n");
  EXPECT_TRUE(Check(fine).ok()) << Check(fine);
}

// MLIR renames a resource blob whose name its context already holds, so a template
// parsed twice in one process read `dense_resource<w>` back as `dense_resource<w_1>`:
// `mtune instantiate --knob 'a=dense_resource<w> : tensor<1xi32>'` failed with the
// value "not among its options [dense_resource<w_1> ...]".
TEST(TemplatePolicy, ResourceBlobsAndDistinctAttributesAreRejected) {
  const std::string knob =
      "    %a = transform.tune.knob<\"a\"> = 2 from options = [dense_resource<w> : "
      "tensor<1xi32>, 2] -> !transform.any_param\n";
  ExpectRejected(Template(knob), "transform.tune.knob", "dense_resource");
  // Also the second time, when the context already holds the name.
  ExpectRejected(Template(knob), "transform.tune.knob", "dense_resource");
  ExpectRejected(Template("", "  transform.named_sequence @blob() attributes {x = "
                              "dense_resource<w> : tensor<2xf32>} {\n    transform.yield\n  }\n"),
                 "transform.named_sequence", "dense_resource");
  // A distinct attribute is a new one on every parse, nested or not.
  ExpectRejected(Template("    %d = transform.tune.knob<\"d\"> options = [[distinct[0]<unit>], 2] "
                          "-> !transform.any_param\n"),
                 "transform.tune.knob", "distinct attribute");
}

}  // namespace
}  // namespace mtune::strategies
