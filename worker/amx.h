// Intel AMX on the worker's CPU: whether it has the bf16 tile multiply, the Linux
// permission a process needs before its first tile instruction, and the tdpbf16ps
// loop whose throughput is the bf16 matrix peak the roofline of bf16 problems uses
// (worker/roofline.h PeakGflopsFor). MLIR-free: part of mtune_calibration.
#pragma once

#include <memory>

#include "absl/status/status.h"

namespace mtune::worker {

// Whether the CPU has AMX tiles with the bf16 multiply (CPUID leaf 7: AMX-TILE and
// AMX-BF16), whatever the operating system allows.
bool CpuHasAmxBf16();

// Asks Linux for the AMX tile data state for this process (arch_prctl
// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA; Linux 5.16 and later): the state is too
// large for every context switch to save, so it is handed out only on request, and
// without it the first tile instruction raises SIGILL. Idempotent. FailedPrecondition
// with the reason where refused (a CPU or kernel without AMX).
absl::Status RequestAmxState();

// A loop of tdpbf16ps on four independent 16 x 16 f32 accumulator tiles (operand
// tiles loaded once): what the CPU's bf16 matrix unit can do with nothing else in
// the way. Callers must have RequestAmxState() granted and CpuHasAmxBf16().
class AmxBf16Loop {
 public:
  AmxBf16Loop();
  ~AmxBf16Loop();
  AmxBf16Loop(const AmxBf16Loop&) = delete;
  AmxBf16Loop& operator=(const AmxBf16Loop&) = delete;

  // Runs whole iterations, at least `flops` floating-point operations (one
  // multiply-add counts two); returns how many it ran.
  double Run(double flops);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mtune::worker
