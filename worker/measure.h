// Compile, verify and time one candidate: the body of a task, run inside the sandbox.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "proto/mtune.pb.h"
#include "worker/kernel_operands.h"
#include "worker/timing.h"

namespace mtune::worker {

// Measures candidates on the calling thread (pin it first). Keeps the operands and
// reference of the last problem, since consecutive tasks usually share it.
//
// A candidate is timed on kOperandSets copies of its operands in turn (problems
// whose footprint is at most kMaxCopiedFootprintBytes; larger ones on one), and its
// median is over all of them. A kernel near a cache's capacity can run at very
// different speeds depending on which physical pages its operands got; timed on one
// set, every candidate of a sandbox would be ranked by that one draw of placement
// and the search would favour kernels that happen to suit it.
class Measurer {
 public:
  Measurer();
  ~Measurer();

  // A result for every outcome: a failed candidate is a result, not an error.
  // `calibration` supplies the roofline the result is normalized against.
  // `test_inject_fault` (test only, see fault_injection.h) raises that fault where
  // the kernel runs.
  mtune::v1::Result Measure(const mtune::v1::Task& task, const mtune::v1::Calibration& calibration,
                            const std::string& test_inject_fault = "");

  // Measure() in two halves, so that compiling can run on other cores than the
  // timing (the overlapped worker). Prepare() compiles the candidate and sets up
  // its operands and reference: nullopt when the kernel is kept for
  // MeasurePrepared(), else the failed result. MeasurePrepared() verifies and
  // times the kept kernel on the calling thread (pin it first); its total_s is
  // both halves' time, not the wait between them. `newer_calibration`, when given,
  // replaces the one Prepare() was given (the figures may have changed while the
  // candidate waited for the measuring core).
  std::optional<mtune::v1::Result> Prepare(const mtune::v1::Task& task,
                                           const mtune::v1::Calibration& calibration);
  mtune::v1::Result MeasurePrepared(const std::string& test_inject_fault = "",
                                    const mtune::v1::Calibration* newer_calibration = nullptr);
  // Seconds the last Prepare() took.
  double prepared_s() const;

  // The age after which a calibration's compute peaks are timed again, on the
  // measuring thread, before a compute-bound result is held against them, seconds
  // (worker/peak_figures.h); <= 0 (the default): never. The result then carries them
  // (Result.retimed_peaks).
  void set_peaks_max_age_s(double seconds) { peaks_max_age_s_ = seconds; }

 private:
  struct Prepared;
  std::unique_ptr<Prepared> prepared_;
  double peaks_max_age_s_ = 0;
  std::string operands_key_;
  std::unique_ptr<KernelOperands> operands_;
  // Copies of operands_->buffers beyond the first set.
  std::vector<std::vector<TypedBuffer>> operand_copies_;
};

inline constexpr int kOperandSets = 3;
inline constexpr uint64_t kMaxCopiedFootprintBytes = uint64_t{64} << 20;

}  // namespace mtune::worker
