#include "worker/bf16_dot.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace mtune::worker {
namespace {

constexpr int kChains = 16;
// One vdpbf16ps: 16 lanes, each two multiply-adds.
constexpr double kFlopsPerIteration = kChains * 16 * 2 * 2;

__attribute__((target("avx512f,avx512bf16"), noinline)) void DotProducts(uint64_t iterations,
                                                                          float* state) {
  __m512 acc[kChains];
#pragma GCC unroll 16
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_load_ps(state + 16 * j);
  // bf16 1.0 times bf16 0.0: every accumulator keeps its value (no overflow, no
  // denormals, nothing the unit could skip: it does not look at the values).
  const __m512bh ones = (__m512bh)_mm512_set1_epi16(0x3f80);
  const __m512bh zeros = (__m512bh)_mm512_setzero_si512();
  for (uint64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], ones, zeros);
  }
#pragma GCC unroll 16
  for (int j = 0; j < kChains; ++j) _mm512_store_ps(state + 16 * j, acc[j]);
}

}  // namespace

bool CpuHasAvx512Bf16() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
}

struct Bf16DotLoop::State {
  alignas(64) float accumulators[kChains * 16] = {};
};

Bf16DotLoop::Bf16DotLoop() : state_(std::make_unique<State>()) {}

Bf16DotLoop::~Bf16DotLoop() = default;

double Bf16DotLoop::Run(double flops) {
  const uint64_t iterations =
      static_cast<uint64_t>(std::max(1.0, std::ceil(flops / kFlopsPerIteration)));
  DotProducts(iterations, state_->accumulators);
  return iterations * kFlopsPerIteration;
}

}  // namespace mtune::worker
