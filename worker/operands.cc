#include "worker/operands.h"

#include <cmath>
#include <cstring>
#include <new>
#include <random>

namespace mtune::worker {

AlignedBuffer::AlignedBuffer(size_t elements) : size_(elements) {
  size_t bytes = ((elements * sizeof(float) + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  data_.reset(static_cast<float*>(p));
}

MemRef2D AlignedBuffer::AsMatrix(int64_t rows, int64_t cols) const {
  return MemRef2D{data(), data(), 0, {rows, cols}, {cols, 1}};
}

std::unique_ptr<MatmulOperands> MakeMatmulOperands(const strategies::Problem& problem) {
  const int64_t m = problem.Dim("m"), n = problem.Dim("n"), k = problem.Dim("k");
  auto ops = std::unique_ptr<MatmulOperands>(new MatmulOperands{
      m, n, k, AlignedBuffer(m * k), AlignedBuffer(k * n), AlignedBuffer(m * n), {}, {}});
  std::mt19937 rng(20261122);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < ops->a.size(); ++i) ops->a.data()[i] = dist(rng);
  for (size_t i = 0; i < ops->b.size(); ++i) ops->b.data()[i] = dist(rng);

  // i-k-j order streams rows of B: fast enough to compute once per problem.
  ops->want.assign(m * n, 0.0);
  ops->scale.assign(m * n, 0.0);
  const float* a = ops->a.data();
  const float* b = ops->b.data();
  for (int64_t i = 0; i < m; ++i) {
    double* want_row = &ops->want[i * n];
    double* scale_row = &ops->scale[i * n];
    for (int64_t p = 0; p < k; ++p) {
      const double av = a[i * k + p];
      const float* b_row = &b[p * n];
      for (int64_t j = 0; j < n; ++j) {
        want_row[j] += av * b_row[j];
        scale_row[j] += std::fabs(av * b_row[j]);
      }
    }
  }
  return ops;
}

double MaxScaledError(const MatmulOperands& ops, int64_t* where) {
  double worst = 0;
  *where = -1;
  const float* c = ops.c.data();
  for (size_t i = 0; i < ops.want.size(); ++i) {
    double err = std::fabs(static_cast<double>(c[i]) - ops.want[i]) / (ops.scale[i] + 1e-30);
    if (!(err <= worst)) {  // also catches NaN
      worst = std::isnan(err) ? INFINITY : err;
      *where = static_cast<int64_t>(i);
      if (std::isinf(worst)) break;
    }
  }
  return worst;
}

double ToleranceForF32(int64_t k) {
  // Worst-case recursive summation error is about k * 2^-24 of the scale; any
  // summation order a strategy picks stays below that. Allow a factor of 4.
  return 4.0 * static_cast<double>(k) * std::ldexp(1.0, -24) + 1e-6;
}

}  // namespace mtune::worker
