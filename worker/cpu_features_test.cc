// The worker refuses a strategy that needs CPU features its CPU lacks
// (mtune.cpu_features, strategies/template_requirements.h) before generating code:
// LLVM would stop the sandbox process on an instruction it cannot select, and the
// result would be an anonymous crash.
#include <string>
#include <vector>

#include "absl/status/statusor.h"

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

// Only what the CPU lacks is named: sse2, which every x86-64 CPU has, is not (the
// test asked for avx512f until a CI host without AVX-512 named it too).
TEST(CpuFeatures, AMissingFeatureIsACompileErrorNamingIt) {
  const std::string script = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed})
      attributes {mtune.cpu_features = ["sse2", "mtune-test-no-such-feature"]} {
    transform.yield
  }
})mlir";
  const mtune::v1::Result result = MeasureScript("copy_2d:m=8,n=8:f32", script);
  EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_COMPILE_ERROR) << result.error();
  EXPECT_TRUE(absl::StrContains(result.error(), "needs the CPU features mtune-test-no-such-feature "))
      << result.error();
  EXPECT_TRUE(absl::StrContains(result.error(), JitKernel::HostCpuName())) << result.error();
}

bool HostHas(const std::vector<std::string>& features) {
  for (const std::string& feature : features)
    if (!absl::StrContains(JitKernel::HostFeatures() + ",", "+" + feature + ",")) return false;
  return true;
}

// The template's candidate for `key` with `knobs` set (the others at their defaults;
// constraints are not checked, so that a test can build a candidate they prune).
absl::StatusOr<std::string> CandidateScript(const std::string& template_name, const std::string& key,
                                            const strategies::KnobValues& knobs,
                                            std::vector<std::string>* cpu_features) {
  auto tpl = strategies::FindTemplate(template_name);
  if (!tpl.ok()) return tpl.status();
  auto problem = strategies::ParseProblemKey(key);
  if (!problem.ok()) return problem.status();
  auto space = strategies::ExtractKnobSpace(tpl->text, *problem);
  if (!space.ok()) return space.status();
  *cpu_features = space->cpu_features;
  auto values = strategies::DefaultCandidate(*space);
  if (!values.has_value()) return absl::NotFoundError("no default candidate");
  for (const auto& [name, value] : knobs) (*values)[name] = value;
  return strategies::Instantiate(tpl->text, *problem, *values);
}

struct FeatureCase {
  std::string template_name;
  std::vector<std::string> features;
};

void PrintTo(const FeatureCase& c, std::ostream* os) { *os << c.template_name; }

class TemplateNeedingFeatures : public testing::TestWithParam<FeatureCase> {};

// On a CPU without the template's features its candidates are refused by name; on
// one with them they compile and verify (template_candidates_test verifies more).
TEST_P(TemplateNeedingFeatures, RunsOnlyWhereTheCpuHasThem) {
  const std::string key = "matmul:m=64,n=64,k=256:bf16";
  std::vector<std::string> features;
  auto script = CandidateScript(GetParam().template_name, key, {}, &features);
  ASSERT_TRUE(script.ok()) << script.status();
  ASSERT_EQ(features, GetParam().features);
  const mtune::v1::Result result = MeasureScript(key, *script);
  if (HostHas(features)) {
    EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK) << result.error();
  } else {
    EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_COMPILE_ERROR) << result.error();
    EXPECT_TRUE(absl::StrContains(result.error(), "mtune.cpu_features")) << result.error();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bf16, TemplateNeedingFeatures,
    testing::Values(FeatureCase{"matmul_bf16_vnni", {"avx512bf16"}},
                    FeatureCase{"matmul_bf16_amx", {"amx-tile", "amx-bf16"}}),
    [](const testing::TestParamInfo<FeatureCase>& info) {
      return info.param.template_name;
    });

// LLVM reports some code generation failures as error diagnostics and, without a
// handler, exits the process. A candidate that needs more AMX tile registers than
// there are (2 x 2 accumulator tiles and a last k step of one pair, whose tiles of
// other shapes need registers of their own) is a COMPILE_ERROR with LLVM's message,
// and the process lives on. The template's constraint prunes that candidate, so the
// test instantiates its 1 x 2 neighbour and edits the block to 2 x 2 in the text:
// what a template without the constraint would give.
TEST(CpuFeatures, LlvmRunningOutOfTileRegistersIsACompileError) {
  const std::string key = "matmul:m=32,n=96,k=34:bf16";
  std::vector<std::string> features;
  auto fine = CandidateScript(
      "matmul_bf16_amx", key,
      {{"tile_n1", "96"}, {"tile_k1", "34"}, {"tile_m2", "16"}, {"tile_n2", "32"}, {"rest_m2", "0"}},
      &features);
  ASSERT_TRUE(fine.ok()) << fine.status();
  if (!HostHas(features)) GTEST_SKIP() << "this CPU lacks AMX";
  std::string too_many = *fine;
  const std::string m2 = R"(transform.tune.knob<"tile_m2"> = 16 : i64)";
  const size_t at = too_many.find(m2);
  ASSERT_NE(at, std::string::npos) << too_many;
  too_many.replace(at, m2.size(), R"(transform.tune.knob<"tile_m2"> = 32 : i64)");
  const mtune::v1::Result result = MeasureScript(key, too_many);
  EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_COMPILE_ERROR) << result.error();
  EXPECT_TRUE(absl::StrContains(result.error(), "ran out of registers")) << result.error();
  // The process that reported it still compiles and runs kernels.
  const mtune::v1::Result after = MeasureScript(key, *fine);
  EXPECT_EQ(after.status(), mtune::v1::RESULT_STATUS_OK) << after.error();
}

}  // namespace
}  // namespace mtune::worker
