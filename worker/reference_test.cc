// Payload and reference agree for every family: the payload compiled with no
// strategy beyond bufferization (linalg lowered to plain loops) must match the
// independent double-precision loops, and a corrupted output must not.
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "strategies/problem.h"
#include "worker/kernel_operands.h"
#include "worker/measure.h"

namespace mtune::worker {
namespace {

constexpr char kBufferizeOnly[] = R"mlir(module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.consumed}) {
    %b = transform.bufferization.one_shot_bufferize %root : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
})mlir";

mtune::v1::Calibration NoCalibration() {
  mtune::v1::Calibration c;
  c.set_peak_gflops_f32(100);
  return c;
}

class PayloadMatchesReference : public testing::TestWithParam<std::string> {};

TEST_P(PayloadMatchesReference, OnRandomData) {
  mtune::v1::Task task;
  task.set_problem(GetParam());
  task.set_script(kBufferizeOnly);
  task.set_min_measure_s(0.001);
  Measurer measurer;
  auto result = measurer.Measure(task, NoCalibration());
  EXPECT_EQ(result.status(), mtune::v1::RESULT_STATUS_OK) << GetParam() << ": " << result.error();
}

// Odd sizes, strides and dilations, every element type a family accepts.
INSTANTIATE_TEST_SUITE_P(
    EveryFamily, PayloadMatchesReference,
    testing::Values("matmul:m=7,n=9,k=13:f32", "matmul:m=7,n=9,k=13:f64",
                    "matmul:m=7,n=9,k=13:bf16", "matmul_transpose_a:m=7,n=9,k=13:f32",
                    "matmul_transpose_b:m=7,n=9,k=13:f64", "batch_matmul:b=3,m=5,n=6,k=7:f32",
                    "conv_1d_nwc_wcf:n=2,w=17,c=3,kw=3,f=5,sw=2,dw=2:f32",
                    "conv_2d_nhwc_hwcf:n=1,h=9,w=11,c=3,kh=3,kw=2,f=4,sh=2,sw=1,dh=1,dw=3:f64",
                    "depthwise_conv_1d_nwc_wc:n=2,w=13,c=5,kw=3,sw=3,dw=1:f32",
                    "depthwise_conv_2d_nhwc_hwc:n=1,h=10,w=9,c=6,kh=3,kw=3,sh=1,sw=2,dh=2,dw=1:f32",
                    "transpose_2d:m=7,n=13:f32", "reduce_rows_2d:m=7,n=13:f32",
                    "reduce_cols_2d:m=7,n=13:f32", "copy_2d:m=7,n=13:f32"));

TEST(Reference, VerificationCatchesWrongAndMissingOutputs) {
  auto problem = strategies::ParseProblemKey("conv_1d_nwc_wcf:n=1,w=33,c=8,kw=3,f=4:f32");
  ASSERT_TRUE(problem.ok());
  auto ops = MakeKernelOperands(*problem);
  TypedBuffer& out = ops->output();
  int64_t where = -1;
  for (int64_t i = 0; i < out.elements(); ++i) out.Set(i, ops->want[i]);
  EXPECT_LE(ops->MaxScaledError(&where), ops->tolerance);
  // One element off by one part in a thousand of its scale is far beyond rounding.
  out.Set(5, ops->want[5] + 1e-3 * ops->scale[5]);
  EXPECT_GT(ops->MaxScaledError(&where), ops->tolerance);
  EXPECT_EQ(where, 5);
  // An overwritten output starts as NaN, so an element never written fails.
  auto copy = strategies::ParseProblemKey("copy_2d:m=3,n=3:f32");
  ASSERT_TRUE(copy.ok());
  auto copy_ops = MakeKernelOperands(*copy);
  copy_ops->ResetOutput();
  EXPECT_TRUE(std::isinf(copy_ops->MaxScaledError(&where)));
}

}  // namespace
}  // namespace mtune::worker
