#include "strategies/transform_library.h"

#include <string>

#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "strategies/apply.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/mlir_support.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"

namespace mtune::strategies {
namespace {

constexpr char kTarget[] = "cpu:test:cpu";

// The default candidate of `template_name` for `key` with `overrides`, instantiated.
std::string DefaultScript(const std::string& template_name, const std::string& key,
                          const KnobValues& overrides = {}) {
  auto problem = ParseProblemKey(key);
  EXPECT_TRUE(problem.ok()) << problem.status();
  auto tpl = FindTemplate(template_name);
  EXPECT_TRUE(tpl.ok()) << tpl.status();
  auto space = ExtractKnobSpace(tpl->text, *problem);
  EXPECT_TRUE(space.ok()) << space.status();
  // The valid default for this problem (the template's values may break a
  // constraint for a small shape), then the test's own choices.
  KnobValues values = DefaultCandidate(*space).value_or(NearestDefaults(*space));
  for (const auto& [name, value] : overrides) values[name] = value;
  auto script = Instantiate(tpl->text, *problem, values);
  EXPECT_TRUE(script.ok()) << script.status();
  return *script;
}

// The payload of `key` with its function renamed to `name`.
std::string Payload(const std::string& key, const std::string& name) {
  auto problem = ParseProblemKey(key);
  auto text = MakePayload(*problem);
  EXPECT_TRUE(text.ok()) << text.status();
  std::string function = *text;
  const std::string from = std::string("@") + kPayloadFunction + "(";
  function.replace(function.find(from), from.size(), "@" + name + "(");
  return function;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The text of function `name` in `printed` (up to the next function).
std::string FunctionText(const std::string& printed, const std::string& name) {
  const size_t at = printed.find("@" + name + "(");
  if (at == std::string::npos) return "";
  const size_t next = printed.find("func.func", at);
  return printed.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

// Both built-in matmul templates, as stored scripts, tune their op whether it
// is alone in its function (the function is transformed) or shares it with
// other linalg ops (the op is outlined into a function of its own first);
// matmul_2level consumes its function handle before bufferizing, which only
// works through the re-linking of root handles.
class LibraryApplyTest : public testing::TestWithParam<const char*> {};

TEST_P(LibraryApplyTest, TunesLoneAndSharedOpsAndLeavesTheRestAlone) {
  const std::string tuned_key = "matmul:m=32,n=64,k=16:f32";
  std::vector<LibraryEntry> entries = {{tuned_key, kTarget, DefaultScript(GetParam(), tuned_key)}};
  auto context = MakeMlirContext();
  const std::string text = Payload(tuned_key, "tuned") +
                           Payload("matmul:m=16,n=16,k=16:f32", "untuned") + R"mlir(
func.func @shared(%a: tensor<32x16xf32>, %b: tensor<16x64xf32>, %c: tensor<32x64xf32>, %u: tensor<16x16xf32>) -> (tensor<32x64xf32>, tensor<16x16xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  %s = linalg.copy ins(%r : tensor<32x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  %t = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x64xf32>) outs(%s : tensor<32x64xf32>) -> tensor<32x64xf32>
  %v = linalg.matmul ins(%u, %u : tensor<16x16xf32>, tensor<16x16xf32>) outs(%u : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %t, %v : tensor<32x64xf32>, tensor<16x16xf32>
}
)mlir";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, context.get());
  ASSERT_TRUE(module);
  auto library = PrepareLibrary(entries, kTarget, context.get());
  ASSERT_TRUE(library.ok()) << library.status();
  auto outcomes = ApplyLibrary(*module, *library);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 6u);
  EXPECT_EQ((*outcomes)[0].kind, OpOutcome::Kind::kTuned);
  EXPECT_EQ((*outcomes)[0].function, "tuned");
  EXPECT_FALSE((*outcomes)[0].outlined);
  EXPECT_EQ((*outcomes)[1].kind, OpOutcome::Kind::kNoEntry);
  EXPECT_EQ((*outcomes)[2].kind, OpOutcome::Kind::kTuned);
  EXPECT_TRUE((*outcomes)[2].outlined);
  EXPECT_EQ((*outcomes)[3].kind, OpOutcome::Kind::kNoEntry);  // the copy
  EXPECT_EQ((*outcomes)[4].kind, OpOutcome::Kind::kTuned);
  EXPECT_EQ((*outcomes)[5].kind, OpOutcome::Kind::kNoEntry);  // 16x16x16

  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  const std::string tuned = FunctionText(printed, "tuned");
  EXPECT_EQ(Count(tuned, "linalg.matmul"), 0) << tuned;
  EXPECT_GT(Count(tuned, "vector.fma"), 0) << tuned;
  const std::string untuned = FunctionText(printed, "untuned");
  EXPECT_EQ(Count(untuned, "linalg.matmul"), 1) << untuned;
  EXPECT_EQ(Count(untuned, "vector."), 0) << untuned;
  // The two tuned ops of @shared are calls of their own kernels now; the copy
  // and the untuned matmul stay, untransformed.
  const std::string shared = FunctionText(printed, "shared");
  const std::string kernel = OutlinedFunctionPrefix(tuned_key);
  EXPECT_EQ(kernel, "mtune_kernel__matmul_m_32_n_64_k_16_f32");
  EXPECT_EQ(Count(shared, "call @" + kernel + "("), 1) << shared;
  EXPECT_EQ(Count(shared, "call @" + kernel + "_0("), 1) << shared;
  EXPECT_EQ(Count(shared, "linalg.copy"), 1) << shared;
  EXPECT_EQ(Count(shared, "linalg.matmul"), 1) << shared;
  EXPECT_EQ(Count(shared, "tensor<16x16xf32>, tensor<16x16xf32>) outs"), 1) << shared;
  EXPECT_EQ(Count(shared, "vector."), 0) << shared;
  for (const std::string& name : {kernel, kernel + "_0"}) {
    const std::string body = FunctionText(printed, name);
    EXPECT_NE(printed.find("func.func private @" + name + "("), std::string::npos) << printed;
    EXPECT_EQ(Count(body, "linalg.matmul"), 0) << body;
    EXPECT_GT(Count(body, "vector.fma"), 0) << body;
  }
}

INSTANTIATE_TEST_SUITE_P(Templates, LibraryApplyTest,
                         testing::Values("matmul_packed", "matmul_2level"));

// Two tuned ops in one function whose strategies chose different contraction
// lowerings: each kernel gets its own (outer products become vector.fma, dot
// products multiplications and additions), neither sees the other's.
TEST(TransformLibrary, SharedOpsKeepTheirOwnLoweringAlternative) {
  const std::string outer_key = "matmul:m=32,n=64,k=16:f32";
  const std::string dot_key = "matmul:m=16,n=32,k=32:f32";
  std::vector<LibraryEntry> entries = {
      {outer_key, kTarget,
       DefaultScript("matmul_packed", outer_key, {{"contraction_lowering", "outerproduct"}})},
      {dot_key, kTarget, DefaultScript("matmul_packed", dot_key, {{"contraction_lowering", "dot"}})},
  };
  auto context = MakeMlirContext();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
func.func @both(%a: tensor<32x16xf32>, %b: tensor<16x64xf32>, %c: tensor<32x64xf32>,
                %d: tensor<16x32xf32>, %e: tensor<32x32xf32>, %f: tensor<16x32xf32>) -> (tensor<32x64xf32>, tensor<16x32xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  %s = linalg.matmul ins(%d, %e : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r, %s : tensor<32x64xf32>, tensor<16x32xf32>
}
)mlir",
                                                        context.get());
  ASSERT_TRUE(module);
  auto library = PrepareLibrary(entries, kTarget, context.get());
  ASSERT_TRUE(library.ok()) << library.status();
  auto outcomes = ApplyLibrary(*module, *library);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  const std::string outer = FunctionText(printed, OutlinedFunctionPrefix(outer_key));
  const std::string dot = FunctionText(printed, OutlinedFunctionPrefix(dot_key));
  EXPECT_GT(Count(outer, "vector.fma"), 0) << outer;
  EXPECT_EQ(Count(outer, "vector.reduction"), 0) << outer;
  EXPECT_GT(Count(dot, "arith.mulf"), 0) << dot;
  EXPECT_EQ(Count(dot, "vector.fma"), 0) << dot;
}

// An entry whose stored strategy no longer applies (here: it expects a
// parent op that is not there, as after an upstream change) fails the whole
// application with an error naming it as stale; nothing is skipped silently.
TEST(TransformLibrary, EntryThatNoLongerAppliesIsReportedStale) {
  const std::string good_key = "matmul:m=32,n=64,k=16:f32";
  const std::string stale_key = "matmul:m=16,n=32,k=32:f32";
  std::string stale_script = DefaultScript("matmul_packed", stale_key);
  // After the script's match of the matmul, ask for a parent it does not have.
  const std::string anchor =
      " = transform.structured.match ops{[\"linalg.matmul\"]} in %arg0 : "
      "(!transform.any_op) -> !transform.any_op\n";
  const size_t at = stale_script.find(anchor);
  ASSERT_NE(at, std::string::npos) << stale_script;
  const size_t name_at = stale_script.rfind('%', at);
  const std::string matched = stale_script.substr(name_at, at - name_at);
  stale_script.insert(at + anchor.size(), "    %gone = transform.get_parent_op " + matched +
                                              " {op_name = \"scf.parallel\"} : "
                                              "(!transform.any_op) -> !transform.any_op\n");
  std::vector<LibraryEntry> entries = {{good_key, kTarget, DefaultScript("matmul_packed", good_key)},
                                       {stale_key, kTarget, stale_script}};
  for (const bool shared : {false, true}) {
    auto context = MakeMlirContext();
    const std::string text =
        shared ? std::string(R"mlir(
func.func @both(%a: tensor<32x16xf32>, %b: tensor<16x64xf32>, %c: tensor<32x64xf32>,
                %d: tensor<16x32xf32>, %e: tensor<32x32xf32>, %f: tensor<16x32xf32>) -> (tensor<32x64xf32>, tensor<16x32xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  %s = linalg.matmul ins(%d, %e : tensor<16x32xf32>, tensor<32x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r, %s : tensor<32x64xf32>, tensor<16x32xf32>
}
)mlir")
               : Payload(good_key, "good") + Payload(stale_key, "stale");
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, context.get());
    ASSERT_TRUE(module);
    auto library = PrepareLibrary(entries, kTarget, context.get());
    ASSERT_TRUE(library.ok()) << library.status();
    auto outcomes = ApplyLibrary(*module, *library);
    ASSERT_FALSE(outcomes.ok()) << (shared ? "shared" : "separate");
    EXPECT_EQ(outcomes.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string message(outcomes.status().message());
    EXPECT_NE(message.find("stale entry (the stored strategy no longer applies"), std::string::npos)
        << message;
    EXPECT_NE(message.find(stale_key + " on " + kTarget), std::string::npos) << message;
    EXPECT_EQ(message.find(good_key), std::string::npos) << message;
    EXPECT_NE(message.find("could not find a parent op"), std::string::npos) << message;
  }
}

TEST(TransformLibrary, DispatchesOneTargetAndNamesWhatItCannotDispatch) {
  const std::string script = DefaultScript("matmul_packed", "matmul:m=32,n=32,k=32:f32");
  std::vector<LibraryEntry> entries = {
      {"matmul:m=32,n=32,k=32:f32", kTarget, script},
      {"conv_2d_nhwc_hwcf:n=1,h=10,w=10,c=4,kh=3,kw=3,f=8,sh=2,sw=2,dh=1,dw=1:f32", kTarget,
       script},
      {"softmax:m=4:f32", kTarget, script},
      {"matmul:m=32,n=32,k=32:f32", "cpu:other:cpu", script},
  };
  auto library = BuildTransformLibrary(entries, kTarget);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ(Count(*library, "@__transform_main("), 1);
  // One walk finds the shared functions, then two per dispatched problem (its
  // ops alone in their function, then those sharing it).
  EXPECT_EQ(Count(*library, "transform.foreach_match restrict_root in"), 1 + 2 * 2);
  EXPECT_EQ(Count(*library, "transform.loop.outline"), 2);
  EXPECT_NE(library->find("filter_operand_types = [tensor<1x10x10x4xf32>, tensor<3x3x4x8xf32>, "
                          "tensor<1x4x4x8xf32>]"),
            std::string::npos);
  EXPECT_NE(library->find("strides = dense<2> : tensor<2xi64>"), std::string::npos) << *library;
  EXPECT_NE(library->find("// not dispatched: softmax:m=4:f32"), std::string::npos);
  // Every entry stays usable as an entry point by its symbol.
  EXPECT_NE(library->find("@" + LibrarySymbol("matmul:m=32,n=32,k=32:f32", "cpu:other:cpu")),
            std::string::npos);

  // Several targets and none chosen: no entry point that could pick the wrong one.
  auto ambiguous = BuildTransformLibrary(entries);
  ASSERT_TRUE(ambiguous.ok()) << ambiguous.status();
  EXPECT_EQ(Count(*ambiguous, "@__transform_main("), 0);
}

TEST(TransformLibrary, BrokenStoredScriptIsDataLoss) {
  auto library = BuildTransformLibrary({{"matmul:m=1,n=1,k=1:f32", kTarget, "not mlir"}});
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kDataLoss);
  library = BuildTransformLibrary({{"matmul:m=1,n=1,k=1:f32", kTarget, "module {}"}});
  EXPECT_EQ(library.status().code(), absl::StatusCode::kDataLoss);
  // Nested deeper than any template (a crafted database): refused before the parser,
  // whose recursion would overflow the stack of the compiler applying it.
  const std::string deep = "module attributes {x = " + std::string(100000, '[') +
                           std::string(100000, ']') + "} {}";
  library = BuildTransformLibrary({{"matmul:m=1,n=1,k=1:f32", kTarget, deep}});
  EXPECT_EQ(library.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(library.status().message().find("nests brackets"), absl::string_view::npos)
      << library.status();
}

}  // namespace
}  // namespace mtune::strategies
