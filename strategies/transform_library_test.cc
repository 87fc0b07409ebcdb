#include "strategies/transform_library.h"

#include <string>

#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "strategies/apply.h"
#include "strategies/knob_space.h"
#include "strategies/mlir_support.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "strategies/template_library.h"

namespace mtune::strategies {
namespace {

constexpr char kTarget[] = "cpu:test:cpu";

// The default candidate of `template_name` for `key`, instantiated.
std::string DefaultScript(const std::string& template_name, const std::string& key) {
  auto problem = ParseProblemKey(key);
  EXPECT_TRUE(problem.ok()) << problem.status();
  auto tpl = FindTemplate(template_name);
  EXPECT_TRUE(tpl.ok()) << tpl.status();
  auto space = ExtractKnobSpace(tpl->text, *problem);
  EXPECT_TRUE(space.ok()) << space.status();
  KnobValues values;
  for (const auto& k : space->knobs)
    values[k.name] = k.default_value.empty() ? k.options.front() : k.default_value;
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

// Both built-in matmul templates, as stored scripts, tune their function and
// only it; matmul_2level consumes its function handle before bufferizing,
// which only works through the re-linking of root handles.
class LibraryApplyTest : public testing::TestWithParam<const char*> {};

TEST_P(LibraryApplyTest, TunesLoneFunctionsAndLeavesTheRestAlone) {
  const std::string tuned_key = "matmul:m=32,n=64,k=16:f32";
  std::vector<LibraryEntry> entries = {{tuned_key, kTarget, DefaultScript(GetParam(), tuned_key)}};
  auto context = MakeMlirContext();
  const std::string text = Payload(tuned_key, "tuned") +
                           Payload("matmul:m=16,n=16,k=16:f32", "untuned") + R"mlir(
func.func @shared(%a: tensor<32x16xf32>, %b: tensor<16x64xf32>, %c: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  %s = linalg.copy ins(%r : tensor<32x64xf32>) outs(%c : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %s : tensor<32x64xf32>
}
)mlir";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, context.get());
  ASSERT_TRUE(module);
  auto library = PrepareLibrary(entries, kTarget, context.get());
  ASSERT_TRUE(library.ok()) << library.status();
  auto outcomes = ApplyLibrary(*module, *library);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  ASSERT_EQ(outcomes->size(), 4u);
  EXPECT_EQ((*outcomes)[0].kind, OpOutcome::Kind::kTuned);
  EXPECT_EQ((*outcomes)[0].function, "tuned");
  EXPECT_EQ((*outcomes)[1].kind, OpOutcome::Kind::kNoEntry);
  EXPECT_EQ((*outcomes)[2].kind, OpOutcome::Kind::kSharedFunction);
  EXPECT_EQ((*outcomes)[3].kind, OpOutcome::Kind::kNoEntry);  // the copy

  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  const std::string tuned = printed.substr(0, printed.find("func.func @untuned"));
  const std::string rest = printed.substr(printed.find("func.func @untuned"));
  EXPECT_EQ(Count(tuned, "linalg.matmul"), 0) << tuned;
  EXPECT_GT(Count(tuned, "vector.fma"), 0) << tuned;
  EXPECT_EQ(Count(rest, "linalg.matmul"), 2) << rest;
  EXPECT_EQ(Count(rest, "vector."), 0) << rest;
}

INSTANTIATE_TEST_SUITE_P(Templates, LibraryApplyTest,
                         testing::Values("matmul_packed", "matmul_2level"));

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
  // One walk finds the shared functions, then one per dispatched problem.
  EXPECT_EQ(Count(*library, "transform.foreach_match restrict_root in"), 1 + 2);
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
}

}  // namespace
}  // namespace mtune::strategies
