#include "worker/measure.h"

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "worker/jit_kernel.h"
#include "worker/roofline.h"

namespace mtune::worker {
namespace {

using Clock = std::chrono::steady_clock;
using mtune::v1::Result;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Measurer::Measurer() = default;
Measurer::~Measurer() = default;

Result Measurer::Measure(const mtune::v1::Task& task, const mtune::v1::Calibration& calibration) {
  const auto task_start = Clock::now();
  Result result;
  auto finish = [&](mtune::v1::ResultStatus status, std::string error) {
    result.set_status(status);
    result.set_error(std::move(error));
    result.set_total_s(Since(task_start));
    return result;
  };

  auto problem = strategies::ParseProblemKey(task.problem());
  if (!problem.ok())
    return finish(mtune::v1::RESULT_STATUS_INVALID_CANDIDATE, problem.status().ToString());
  auto payload = strategies::MakePayload(*problem);
  if (!payload.ok())
    return finish(mtune::v1::RESULT_STATUS_INVALID_CANDIDATE, payload.status().ToString());

  CompileTimes times;
  CompileFailure failure;
  std::unique_ptr<JitKernel> kernel = JitKernel::Compile(*payload, task.script(), &times, &failure);
  result.set_compile_s(times.total());
  if (!kernel) return finish(failure.status, failure.error);

  if (operands_key_ != problem->Key()) {
    operands_.reset();
    operands_ = MakeMatmulOperands(*problem);
    operands_key_ = problem->Key();
  }
  MatmulOperands& ops = *operands_;
  MemRef2D a = ops.a.AsMatrix(ops.m, ops.k);
  MemRef2D b = ops.b.AsMatrix(ops.k, ops.n);
  MemRef2D c = ops.c.AsMatrix(ops.m, ops.n);

  // Verify on a zeroed output: the kernel accumulates into C.
  auto verify_start = Clock::now();
  std::memset(ops.c.data(), 0, ops.c.size() * sizeof(float));
  kernel->Call(&a, &b, &c);
  int64_t where = -1;
  const double error = MaxScaledError(ops, &where);
  result.set_max_rel_error(error);
  result.set_verify_s(Since(verify_start));
  if (!(error <= ToleranceForF32(ops.k))) {
    return finish(mtune::v1::RESULT_STATUS_WRONG_RESULT,
                  absl::StrFormat("C[%d][%d] = %g, reference %g (scaled error %.3g > tolerance %.3g)",
                                  where / ops.n, where % ops.n, ops.c.data()[where],
                                  ops.want[where], error, ToleranceForF32(ops.k)));
  }

  TimingOptions timing_options;
  if (task.min_measure_s() > 0) timing_options.min_total_s = task.min_measure_s();
  *result.mutable_timing() = TimeCalls([&] { kernel->Call(&a, &b, &c); }, timing_options);

  const double seconds = result.timing().median_s();
  const double gflops = problem->Flops() / seconds / 1e9;
  result.set_gflops(gflops);
  result.set_gbps(problem->CompulsoryBytes() / seconds / 1e9);
  RooflinePoint roof = ComputeRoofline(calibration, problem->Flops(), problem->CompulsoryBytes(),
                                       problem->FootprintBytes());
  result.set_roofline_gflops(roof.bound_gflops);
  result.set_roofline_level(roof.level);
  result.set_fraction_of_roofline(FractionOfRoofline(gflops, roof));
  return finish(mtune::v1::RESULT_STATUS_OK, "");
}

}  // namespace mtune::worker
