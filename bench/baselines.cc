#include "bench/baselines.h"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cblas.h"
#include "oneapi/dnnl/dnnl.h"

// Debian's oneDNN 2.6 is built with the OpenMP CPU runtime (DNNL_CPU_RUNTIME ==
// DNNL_RUNTIME_OMP in dnnl_config.h), so its thread count is the calling thread's
// OpenMP setting.
static_assert(DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP,
              "oneDNN is not built with OpenMP: limit its threads another way");

namespace mtune::bench {
namespace {

using Clock = std::chrono::steady_clock;
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

absl::Status OneDnnSgemm(int m, int n, int k, const float* a, const float* b, float* c) {
  // omp_set_num_threads sets the ICV of the calling thread only, so it is set here,
  // on the thread that calls oneDNN, every time.
  omp_set_num_threads(1);
  const dnnl_status_t status = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 1.0f, c, n);
  if (status != dnnl_success) {
    return absl::InternalError(absl::StrCat("dnnl_sgemm failed with status ", status));
  }
  return absl::OkStatus();
}

void EigenSgemm(int m, int n, int k, const float* a, const float* b, float* c) {
  // Eigen only threads when built with OpenMP (this file is, for oneDNN's sake).
  Eigen::setNbThreads(1);
  Eigen::Map<const RowMajor> lhs(a, m, k);
  Eigen::Map<const RowMajor> rhs(b, k, n);
  Eigen::Map<RowMajor> out(c, m, n);
  out.noalias() += lhs * rhs;
}

void OpenBlasSgemm(int m, int n, int k, const float* a, const float* b, float* c) {
  // Debian's default OpenBLAS is the pthread build: a process-wide pool size.
  openblas_set_num_threads(1);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 1.0f, c,
              n);
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], FreeDeleter>;

// 64-byte aligned, filled with a fixed pattern in [-1, 1] (no denormals, no zeros
// that a library could shortcut).
AlignedFloats MakeOperand(size_t count, uint32_t seed) {
  const size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  AlignedFloats data(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!data) return data;
  uint32_t state = seed;
  for (size_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    data[i] = static_cast<float>(state >> 8) / static_cast<float>(1 << 23) - 1.0f;
  }
  return data;
}

absl::Status CheckShape(int m, int n, int k) {
  if (m <= 0 || n <= 0 || k <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM sizes must be positive, got m=", m, " n=", n, " k=", k));
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view GemmLibraryName(GemmLibrary library) {
  switch (library) {
    case GemmLibrary::kOneDnn:
      return "onednn";
    case GemmLibrary::kEigen:
      return "eigen";
    case GemmLibrary::kOpenBlas:
      return "openblas";
  }
  return "unknown";
}

absl::Status RunSgemm(GemmLibrary library, int m, int n, int k, const float* a,
                      const float* b, float* c) {
  if (absl::Status status = CheckShape(m, n, k); !status.ok()) return status;
  switch (library) {
    case GemmLibrary::kOneDnn:
      return OneDnnSgemm(m, n, k, a, b, c);
    case GemmLibrary::kEigen:
      EigenSgemm(m, n, k, a, b, c);
      return absl::OkStatus();
    case GemmLibrary::kOpenBlas:
      OpenBlasSgemm(m, n, k, a, b, c);
      return absl::OkStatus();
  }
  return absl::InvalidArgumentError("unknown GEMM library");
}

absl::StatusOr<GemmTiming> TimeSgemm(GemmLibrary library, int m, int n, int k,
                                     double min_time_s) {
  if (absl::Status status = CheckShape(m, n, k); !status.ok()) return status;
  if (!(min_time_s >= 0)) return absl::InvalidArgumentError("min_time_s must be >= 0");
  const size_t mm = m, nn = n, kk = k;
  AlignedFloats a = MakeOperand(mm * kk, 1);
  AlignedFloats b = MakeOperand(kk * nn, 2);
  AlignedFloats c = MakeOperand(mm * nn, 3);
  if (!a || !b || !c) return absl::ResourceExhaustedError("cannot allocate GEMM operands");
  // Warm-up: first calls JIT kernels (oneDNN), spin up pools and fault in pages.
  for (int i = 0; i < 2; ++i) {
    if (absl::Status status = RunSgemm(library, m, n, k, a.get(), b.get(), c.get());
        !status.ok()) {
      return status;
    }
  }
  std::vector<double> times;
  double total = 0.0;
  while (times.size() < 3 || total < min_time_s) {
    const Clock::time_point start = Clock::now();
    absl::Status status = RunSgemm(library, m, n, k, a.get(), b.get(), c.get());
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (!status.ok()) return status;
    times.push_back(elapsed);
    total += elapsed;
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  GemmTiming timing;
  timing.median_s = times[times.size() / 2];
  timing.gflops = 2.0 * mm * nn * kk / timing.median_s / 1e9;
  timing.repetitions = static_cast<int>(times.size());
  return timing;
}

absl::StatusOr<GemmTiming> TimeOneDnnSgemm(int m, int n, int k, double min_time_s) {
  return TimeSgemm(GemmLibrary::kOneDnn, m, n, k, min_time_s);
}

absl::StatusOr<GemmTiming> TimeEigenSgemm(int m, int n, int k, double min_time_s) {
  return TimeSgemm(GemmLibrary::kEigen, m, n, k, min_time_s);
}

absl::StatusOr<GemmTiming> TimeOpenBlasSgemm(int m, int n, int k, double min_time_s) {
  return TimeSgemm(GemmLibrary::kOpenBlas, m, n, k, min_time_s);
}

}  // namespace mtune::bench
