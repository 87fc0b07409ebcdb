// The worker refuses a strategy that needs CPU features its CPU lacks
// (mtune.cpu_features, strategies/template_requirements.h) before generating code:
// LLVM would stop the sandbox process on an instruction it cannot select, and the
// result would be an anonymous crash.
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "strategies/default_candidate.h"
#include "strategies/knob_space.h"
#include "strategies/template_library.h"
#include "worker/jit_kernel.h"
#include "worker/measure.h"
#include "worker/test_calibration.h"

namespace mtune::worker {
namespace {

mtune::v1::Result MeasureScript(const std::string& key, const std::string& script) {
  mtune::v1::Task task;
  task.set_problem(key);
  task.set_script(script);
  task.set_min_measure_s(0.001);
  Measurer measurer;
  return measurer.Measure(task, FlatTestCalibration());
}

TEST(CpuFeatures, AMissingFeatureIsACompileErrorNamingIt) {
  const std::string script = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.cpu_features = ["avx512f", "mtune-test-no-such-feature"]} {
    transform.yield
  }
})mlir";
  const mtune::v1::Result result = MeasureScript("copy_2d:m=8,n=8:f32", script);
  EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_COMPILE_ERROR) << result.error();
  EXPECT_TRUE(absl::StrContains(result.error(), "needs the CPU features mtune-test-no-such-feature "))
      << result.error();
  EXPECT_TRUE(absl::StrContains(result.error(), JitKernel::HostCpuName())) << result.error();
}

// On a CPU without AVX512-BF16 the dot-product template's candidates are refused by
// name; on one with it they compile (template_candidates_test verifies them).
TEST(CpuFeatures, TheBf16DotProductTemplateRunsOnlyWhereTheCpuHasIt) {
  auto tpl = strategies::FindTemplate("matmul_bf16_vnni");
  ASSERT_TRUE(tpl.ok()) << tpl.status();
  const std::string key = "matmul:m=64,n=64,k=256:bf16";
  auto problem = strategies::ParseProblemKey(key);
  ASSERT_TRUE(problem.ok()) << problem.status();
  auto space = strategies::ExtractKnobSpace(tpl->text, *problem);
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_EQ(space->cpu_features, std::vector<std::string>{"avx512bf16"});
  auto values = strategies::DefaultCandidate(*space);
  ASSERT_TRUE(values.has_value());
  auto script = strategies::Instantiate(tpl->text, *problem, *values);
  ASSERT_TRUE(script.ok()) << script.status();
  const mtune::v1::Result result = MeasureScript(key, *script);
  if (absl::StrContains(JitKernel::HostFeatures() + ",", "+avx512bf16,")) {
    EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK) << result.error();
  } else {
    EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_COMPILE_ERROR) << result.error();
    EXPECT_TRUE(absl::StrContains(result.error(), "avx512bf16")) << result.error();
  }
}

}  // namespace
}  // namespace mtune::worker
