#include "worker/measure.h"

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "worker/fault_injection.h"
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

Result Measurer::Measure(const mtune::v1::Task& task, const mtune::v1::Calibration& calibration,
                         const std::string& test_inject_fault) {
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
    operands_ = MakeKernelOperands(*problem);
    operands_key_ = problem->Key();
  }
  KernelOperands& ops = *operands_;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void*> args;
  for (const TypedBuffer& buffer : ops.buffers) descriptors.push_back(buffer.Descriptor());
  for (std::vector<int64_t>& d : descriptors) args.push_back(d.data());

  // Verify on a fresh output (zero when the kernel accumulates into it).
  auto verify_start = Clock::now();
  ops.ResetOutput();
  RaiseInjectedFaultBeforeKernel(test_inject_fault);
  kernel->Call(args);
  if (test_inject_fault == "wrong") {
    TypedBuffer& out = ops.output();
    out.Set(0, out.Get(0) + 1000.0);
  }
  int64_t where = -1;
  const double error = ops.MaxScaledError(&where);
  result.set_max_rel_error(error);
  result.set_verify_s(Since(verify_start));
  if (!(error <= ops.tolerance)) {
    return finish(mtune::v1::RESULT_STATUS_WRONG_RESULT,
                  absl::StrFormat("output element %d = %g, reference %g (scaled error %.3g > "
                                  "tolerance %.3g)",
                                  where, ops.output().Get(where), ops.want[where], error,
                                  ops.tolerance));
  }

  TimingOptions timing_options;
  if (task.min_measure_s() > 0) timing_options.min_total_s = task.min_measure_s();
  *result.mutable_timing() = TimeCalls([&] { kernel->Call(args); }, timing_options);

  const double seconds = result.timing().median_s();
  const double gflops = problem->Flops() / seconds / 1e9;
  result.set_gflops(gflops);
  result.set_gbps(problem->CompulsoryBytes() / seconds / 1e9);
  // The calibration measures the f32 FMA peak. An f64 FMA does half the lanes at the
  // same instruction throughput on every x86 vector unit, so its peak is half. bf16
  // inputs are widened and multiplied in f32, so the f32 peak bounds them.
  mtune::v1::Calibration for_type = calibration;
  if (problem->AccumulatorType() == "f64")
    for_type.set_peak_gflops_f32(calibration.peak_gflops_f32() / 2);
  RooflinePoint roof = ComputeRoofline(for_type, problem->Flops(), problem->CompulsoryBytes(),
                                       problem->FootprintBytes());
  result.set_roofline_gflops(roof.bound_gflops);
  result.set_roofline_level(roof.level);
  // Pure data movement (copy, transpose) does no arithmetic: its roofline is the
  // bandwidth of the level its footprint fits.
  result.set_fraction_of_roofline(problem->Flops() > 0 ? FractionOfRoofline(gflops, roof)
                                  : roof.level_gbps > 0 ? result.gbps() / roof.level_gbps
                                                        : 0.0);
  return finish(mtune::v1::RESULT_STATUS_OK, "");
}

}  // namespace mtune::worker
