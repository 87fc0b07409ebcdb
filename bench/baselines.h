// Single-threaded f32 GEMM of the libraries mtune is compared against (oneDNN, Eigen,
// OpenBLAS): one call each to run, one to time.
#ifndef MTUNE_BENCH_BASELINES_H_
#define MTUNE_BENCH_BASELINES_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mtune::bench {

// A GEMM implementation mtune's kernels are compared with.
enum class GemmLibrary { kOneDnn, kEigen, kOpenBlas };

// Every GemmLibrary, for loops over all baselines.
inline constexpr GemmLibrary kAllGemmLibraries[] = {GemmLibrary::kOneDnn, GemmLibrary::kEigen,
                                                    GemmLibrary::kOpenBlas};

// Short display name: "onednn", "eigen", "openblas".
std::string_view GemmLibraryName(GemmLibrary library);

// Timing of one GEMM shape on the calling thread.
struct GemmTiming {
  // Median wall time of one call, seconds.
  double median_s = 0.0;
  // 2*m*n*k / median_s / 1e9.
  double gflops = 0.0;
  // Timed calls the median is taken over (after warm-up).
  int repetitions = 0;
};

// C += A * B with row-major A (m x k), B (k x n), C (m x n), on one thread: what
// linalg.matmul computes, and so mtune's kernels (beta = 1; with beta = 0 a library
// would skip reading C, which mtune's kernel cannot).
absl::Status RunSgemm(GemmLibrary library, int m, int n, int k, const float* a,
                      const float* b, float* c);

// Times RunSgemm on 64-byte aligned operands: warm-up, then calls until `min_time_s`
// of timed work (at least 3), median.
absl::StatusOr<GemmTiming> TimeSgemm(GemmLibrary library, int m, int n, int k,
                                     double min_time_s);

// oneDNN 2.6 dnnl_sgemm, one thread.
absl::StatusOr<GemmTiming> TimeOneDnnSgemm(int m, int n, int k, double min_time_s);
// Eigen 3.4 row-major product, one thread.
absl::StatusOr<GemmTiming> TimeEigenSgemm(int m, int n, int k, double min_time_s);
// OpenBLAS cblas_sgemm, one thread.
absl::StatusOr<GemmTiming> TimeOpenBlasSgemm(int m, int n, int k, double min_time_s);

}  // namespace mtune::bench

#endif  // MTUNE_BENCH_BASELINES_H_
