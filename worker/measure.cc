#include "worker/measure.h"

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/compute_peaks.h"
#include "strategies/payload.h"
#include "strategies/problem.h"
#include "worker/calibration.h"
#include "worker/fault_injection.h"
#include "worker/footprint_figures.h"
#include "worker/jit_kernel.h"
#include "worker/peak_figures.h"
#include "worker/roofline.h"
#include "worker/timing.h"

namespace mtune::worker {
namespace {

using Clock = std::chrono::steady_clock;
using mtune::v1::Result;

// Copying (and reading) timed per loop to measure the bandwidth at a problem's
// footprint, where the worker does not hold fresh figures for it (the calibration's
// own per level is 0.15 s).
constexpr double kFootprintCopyTimeS = 0.1;

// The roofline of `problem` at the level its footprint fits, from `calibration`'s
// level figures and the peak that bounds its element type.
struct LevelRoofline {
  double peak_gflops = 0;  // PeakGflopsFor
  RooflinePoint roof;
  bool bandwidth_bound = false;  // that level's bandwidth bounds it below the peak
};

LevelRoofline RooflineAtLevel(const mtune::v1::Calibration& calibration, const strategies::Problem& problem) {
  LevelRoofline level;
  level.peak_gflops = PeakGflopsFor(calibration, problem);
  mtune::v1::Calibration for_type = calibration;
  for_type.set_peak_gflops_f32(level.peak_gflops);
  level.roof = ComputeRoofline(for_type, problem.Flops(), problem.CompulsoryBytes(), problem.FootprintBytes());
  level.bandwidth_bound = BandwidthBound(level.roof, problem.Flops(), level.peak_gflops);
  return level;
}

// Times the compute peaks of `calibration` again, on this thread, and puts them in it
// and in `result`, when they are due (worker/peak_figures.h) and may bound `problem`,
// which ran at `gflops`: a problem its level's bandwidth bounds below the peak does
// not need them.
void RetimePeaksIfDue(const strategies::Problem& problem, double gflops, double max_age_s,
                      mtune::v1::Calibration& calibration, Result& result) {
  if (!(problem.Flops() > 0)) return;
  const LevelRoofline level = RooflineAtLevel(calibration, problem);
  if (level.bandwidth_bound) return;
  const PeaksRetiming due = PeaksDueForRetiming(calibration, gflops, level.peak_gflops, max_age_s, UnixNowS());
  if (due == PeaksRetiming::kNone) return;
  mtune::v1::ComputePeaks peaks = TimePeaksAgain(calibration);
  peaks.set_beaten(due == PeaksRetiming::kBeaten);
  mtune::v1::TakeNewerPeaks(peaks, calibration);
  *result.mutable_retimed_peaks() = peaks;
}

}  // namespace

// A compiled candidate waiting to be verified and timed.
struct Measurer::Prepared {
  mtune::v1::Task task;
  mtune::v1::Calibration calibration;
  strategies::Problem problem;
  std::unique_ptr<JitKernel> kernel;
  Result result;          // compile_s so far
  double prepare_s = 0;   // time Prepare() took
};

Measurer::Measurer() = default;
Measurer::~Measurer() = default;

double Measurer::prepared_s() const { return prepared_ ? prepared_->prepare_s : 0; }

std::optional<Result> Measurer::Prepare(const mtune::v1::Task& task,
                                        const mtune::v1::Calibration& calibration) {
  const auto start = Clock::now();
  prepared_.reset();
  Result result;
  auto fail = [&](mtune::v1::ResultStatus status, std::string error) {
    result.set_status(status);
    result.set_error(std::move(error));
    result.set_total_s(SecondsSince(start));
    return result;
  };
  auto problem = strategies::ParseProblemKey(task.problem());
  if (!problem.ok())
    return fail(mtune::v1::RESULT_STATUS_INVALID_CANDIDATE, problem.status().ToString());
  auto payload = strategies::MakePayload(*problem);
  if (!payload.ok())
    return fail(mtune::v1::RESULT_STATUS_INVALID_CANDIDATE, payload.status().ToString());

  CompileTimes times;
  CompileFailure failure;
  std::unique_ptr<JitKernel> kernel = JitKernel::Compile(*payload, task.script(), &times, &failure);
  result.set_compile_s(times.total());
  if (!kernel) return fail(failure.status, failure.error);

  // Operands and the reference belong to the preparation: computing a reference
  // is not timed, so it need not use the measuring core.
  if (operands_key_ != problem->Key()) {
    operand_copies_.clear();
    operands_.reset();
    operands_ = MakeKernelOperands(*problem);
    if (problem->FootprintBytes() <= kMaxCopiedFootprintBytes)
      for (int set = 1; set < kOperandSets; ++set) operand_copies_.push_back(CopyBuffers(operands_->buffers));
    operands_key_ = problem->Key();
  }
  prepared_ = std::make_unique<Prepared>(
      Prepared{task, calibration, *problem, std::move(kernel), result, SecondsSince(start)});
  return std::nullopt;
}

Result Measurer::MeasurePrepared(const std::string& test_inject_fault,
                                 const mtune::v1::Calibration* newer_calibration) {
  const auto start = Clock::now();
  if (!prepared_) {
    Result result;
    result.set_status(mtune::v1::RESULT_STATUS_CRASH);
    result.set_error("no compiled candidate to measure (the sandbox was restarted in between)");
    return result;
  }
  std::unique_ptr<Prepared> p = std::move(prepared_);
  if (newer_calibration) p->calibration = *newer_calibration;
  Result result = p->result;
  const strategies::Problem& problem = p->problem;
  auto finish = [&](mtune::v1::ResultStatus status, std::string error) {
    result.set_status(status);
    result.set_error(std::move(error));
    result.set_total_s(p->prepare_s + SecondsSince(start));
    return result;
  };

  KernelOperands& ops = *operands_;
  // Per operand set: the memref descriptors, and the call arguments pointing at them.
  std::vector<std::vector<std::vector<int64_t>>> descriptors(1 + operand_copies_.size());
  std::vector<std::vector<void*>> set_args(descriptors.size());
  for (size_t set = 0; set < descriptors.size(); ++set) {
    for (const TypedBuffer& buffer : set == 0 ? ops.buffers : operand_copies_[set - 1])
      descriptors[set].push_back(buffer.Descriptor());
    for (std::vector<int64_t>& d : descriptors[set]) set_args[set].push_back(d.data());
  }
  std::vector<void*>& args = set_args[0];

  // Verify on a fresh output (zero when the kernel accumulates into it).
  auto verify_start = Clock::now();
  ops.ResetOutput();
  RaiseInjectedFaultBeforeKernel(test_inject_fault);
  p->kernel->Call(args);
  if (test_inject_fault == "wrong") {
    TypedBuffer& out = ops.output();
    out.Set(0, out.Get(0) + 1000.0);
  }
  int64_t where = -1;
  const double error = ops.MaxScaledError(&where);
  result.set_max_rel_error(error);
  result.set_verify_s(SecondsSince(verify_start));
  if (!(error <= ops.tolerance)) {
    return finish(mtune::v1::RESULT_STATUS_WRONG_RESULT,
                  absl::StrFormat("output element %d = %g, reference %g (scaled error %.3g > "
                                  "tolerance %.3g)",
                                  where, ops.output().Get(where), ops.want[where], error,
                                  ops.tolerance));
  }

  TimingOptions timing_options;
  if (p->task.min_measure_s() > 0) timing_options.min_total_s = p->task.min_measure_s();
  JitKernel& kernel = *p->kernel;
  std::vector<std::function<void()>> calls;
  for (std::vector<void*>& a : set_args) calls.push_back([&kernel, &a] { kernel.Call(a); });
  *result.mutable_timing() = TimeCallsInTurn(calls, timing_options);

  const double seconds = result.timing().median_s();
  const double gflops = problem.Flops() / seconds / 1e9;
  result.set_gflops(gflops);
  result.set_gbps(problem.CompulsoryBytes() / seconds / 1e9);
  RetimePeaksIfDue(problem, gflops, peaks_max_age_s_, p->calibration, result);
  const LevelRoofline level = RooflineAtLevel(p->calibration, problem);
  const double peak = level.peak_gflops;
  RooflinePoint roof = level.roof;
  // A bandwidth-bound problem inside the caches is held against the bandwidth of its
  // own reads and writes at its own footprint, from a copy and a read stream measured
  // there (on the pinned core, unless the worker already has them): a level's figure
  // is taken at half its capacity, inside a large shared cache a smaller footprint
  // can copy twice as fast, and a core reads faster than it copies. So is one beyond
  // the caches whose footprint is smaller than DRAM's calibration working set (part
  // of it may still be cached); a larger one is held against the same stream model
  // with DRAM's copy and read figures (HeldAgainstLevelFigures).
  const bool bandwidth_bound = level.bandwidth_bound;
  if (bandwidth_bound && HeldAgainstLevelFigures(p->calibration, roof.level, problem.FootprintBytes())) {
    roof = WithBandwidth(roof, StreamGbps(roof.level_gbps, roof.level_read_gbps, problem), peak,
                         problem.Flops(), problem.CompulsoryBytes());
  } else if (bandwidth_bound) {
    const uint64_t footprint = problem.FootprintBytes();
    mtune::v1::BandwidthLevel at;
    if (const mtune::v1::BandwidthLevel* held = FiguresAtFootprint(p->calibration, footprint)) at = *held;
    if (!(at.gbps() > 0) || !(at.read_gbps() > 0)) {
      TouchedMemory memory;  // touched once for the copies and the reads
      const CopyGbps copy = MeasureCopyGbps(footprint, kFootprintCopyTimeS, 3, &memory);
      at.set_gbps(copy.gbps);
      at.set_streaming_stores(copy.streaming_stores);
      at.set_copy_streams(copy.streams);
      const ReadGbps read = MeasureReadGbps(footprint, kFootprintCopyTimeS, 3, &memory);
      at.set_read_gbps(read.gbps);
      at.set_read_streams(read.streams);
      at.set_measured_unix_s(UnixNowS());
    }
    if (at.gbps() > 0) {
      roof = WithBandwidth(roof, StreamGbps(at.gbps(), at.read_gbps(), problem), peak,
                           problem.Flops(), problem.CompulsoryBytes());
      at.set_level(roof.level);
      at.set_working_set_bytes(footprint);
      at.set_capacity_bytes(footprint);
      *result.mutable_footprint_bandwidth() = at;
    }
  }
  result.set_roofline_gbps(roof.level_gbps);
  result.set_roofline_gflops(roof.bound_gflops);
  result.set_roofline_level(roof.level);
  // Pure data movement (copy, transpose) does no arithmetic: its roofline is the
  // bandwidth of the level its footprint fits.
  result.set_fraction_of_roofline(problem.Flops() > 0 ? FractionOfRoofline(gflops, roof)
                                  : roof.level_gbps > 0 ? result.gbps() / roof.level_gbps
                                                        : 0.0);
  return finish(mtune::v1::RESULT_STATUS_OK, "");
}

Result Measurer::Measure(const mtune::v1::Task& task, const mtune::v1::Calibration& calibration,
                         const std::string& test_inject_fault) {
  if (std::optional<Result> failed = Prepare(task, calibration)) return *failed;
  return MeasurePrepared(test_inject_fault);
}

}  // namespace mtune::worker
