#include "bench/l1_micro_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mtune::bench {
namespace {

constexpr int kRows = 8;       // broadcast A elements per k step
constexpr int kVectors = 2;    // zmm vectors of B per k step (32 floats)
constexpr long kK = 256;       // k steps per call: A 8 KiB + B 32 KiB, within L1
constexpr double kFlopsPerCall = 2.0 * kRows * kVectors * 16 * kK;

// Written after every call so the compiler must compute the accumulators.
volatile float g_sink = 0.0f;

#if defined(__x86_64__)
__attribute__((target("avx512f,fma"), noinline)) void TileLoop(const float* a, const float* b,
                                                                 float* c) {
  __m512 acc[kRows * kVectors];
#pragma GCC unroll 16
  for (int i = 0; i < kRows * kVectors; ++i) acc[i] = _mm512_load_ps(c + 16 * i);
  for (long k = 0; k < kK; ++k) {
    const __m512 b0 = _mm512_load_ps(b + 32 * k);
    const __m512 b1 = _mm512_load_ps(b + 32 * k + 16);
#pragma GCC unroll 8
    for (int i = 0; i < kRows; ++i) {
      const __m512 broadcast = _mm512_set1_ps(a[kRows * k + i]);
      acc[2 * i] = _mm512_fmadd_ps(broadcast, b0, acc[2 * i]);
      acc[2 * i + 1] = _mm512_fmadd_ps(broadcast, b1, acc[2 * i + 1]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kRows * kVectors; ++i) _mm512_store_ps(c + 16 * i, acc[i]);
}
#endif

}  // namespace

// Its member types are its own, not the anonymous namespace's: a member of a class
// with linkage cannot hold a type without it (GCC's -Wsubobject-linkage, seen once a
// unity build includes this file).
struct L1MicroKernelLoop::State {
  struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
  };
  using Floats = std::unique_ptr<float[], FreeDeleter>;

  static Floats Aligned(size_t count, float value) {
    Floats p(static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64)));
    if (p) std::fill_n(p.get(), count, value);
    return p;
  }

  // Small values: the accumulators grow by about 0.00025 per call, far from overflow.
  Floats a = Aligned(kRows * kK, 1.0f / 1024);
  Floats b = Aligned(kVectors * 16 * kK, 1.0f / 1024);
  Floats c = Aligned(kRows * kVectors * 16, 0.0f);
};

L1MicroKernelLoop::L1MicroKernelLoop() : state_(std::make_unique<State>()) {}
L1MicroKernelLoop::~L1MicroKernelLoop() = default;

bool L1MicroKernelLoop::available() const {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") && state_->a &&
         state_->b && state_->c;
#else
  return false;
#endif
}

double L1MicroKernelLoop::Run(double flops) {
#if defined(__x86_64__)
  if (!available()) return 0;
  const long calls = std::max(1L, static_cast<long>(std::ceil(flops / kFlopsPerCall)));
  for (long i = 0; i < calls; ++i) TileLoop(state_->a.get(), state_->b.get(), state_->c.get());
  g_sink = state_->c[0];
  return calls * kFlopsPerCall;
#else
  (void)flops;
  return 0;
#endif
}

}  // namespace mtune::bench
