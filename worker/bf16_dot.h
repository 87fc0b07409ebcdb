// AVX512-BF16 on the worker's CPU: whether it has the bf16 dot product (vdpbf16ps:
// each f32 lane adds the products of a pair of bf16 values, twice the FLOPs of an f32
// FMA per lane) and the loop whose throughput is the peak of bf16 problems on a CPU
// without AMX (worker/roofline.h PeakGflopsFor). MLIR-free: part of mtune_calibration.
#pragma once

#include <memory>

namespace mtune::worker {

// Whether the CPU has AVX512-BF16 (what the OS allows of AVX-512 included).
bool CpuHasAvx512Bf16();

// A loop of vdpbf16ps on 16 independent zmm accumulators (enough chains to cover the
// instruction's latency on every AVX-512 core), operands in registers. Callers must
// check CpuHasAvx512Bf16().
class Bf16DotLoop {
 public:
  Bf16DotLoop();
  ~Bf16DotLoop();
  Bf16DotLoop(const Bf16DotLoop&) = delete;
  Bf16DotLoop& operator=(const Bf16DotLoop&) = delete;

  // Runs whole iterations, at least `flops` floating-point operations (one
  // multiply-add counts two); returns how many it ran.
  double Run(double flops);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mtune::worker
