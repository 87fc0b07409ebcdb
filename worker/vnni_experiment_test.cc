// strategies/experiments/matmul_bf16_vnni.mlir, measured by the worker as
// `mtune measure --template-file` would: on a CPU with AVX512-BF16 its kernels
// (vdpbf16ps, through x86vector and the mtune-flatten-transfers pass, lowered with
// the worker's x86vector-enabled pipeline) must verify against the reference.
// Without the x86vector lowering in the worker's pipeline both fail to compile
// ("could not convert to LLVM IR": the dot product op is left as it is).
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "worker/jit_kernel.h"
#include "worker/measure.h"
#include "worker/test_calibration.h"

namespace mtune::worker {
namespace {

TEST(VnniExperiment, Bf16DotProductKernelsVerify) {
  if (JitKernel::HostFeatures().find("+avx512bf16") == std::string::npos)
    GTEST_SKIP() << "this CPU has no AVX512-BF16";
  std::ifstream file(MTUNE_SOURCE_DIR "/strategies/experiments/matmul_bf16_vnni.mlir");
  ASSERT_TRUE(file) << "experiment script not found";
  std::stringstream script;
  script << file.rdbuf();
  // Several register tiles in m and n, k pairs beyond one cache line of A.
  for (const char* key : {"matmul:m=40,n=96,k=34:bf16", "matmul:m=64,n=64,k=256:bf16"}) {
    mtune::v1::Task task;
    task.set_problem(key);
    task.set_script(script.str());
    task.set_min_measure_s(0.001);
    Measurer measurer;
    auto result = measurer.Measure(task, FlatTestCalibration());
    EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK)
        << key << ": " << mtune::v1::ResultStatus_Name(result.status()) << ": " << result.error();
  }
}

}  // namespace
}  // namespace mtune::worker
