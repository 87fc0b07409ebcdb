// Kernel operands with deterministic random contents, and the independent reference.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "strategies/problem.h"
#include "worker/jit_kernel.h"

namespace mtune::worker {

// A 64-byte aligned float buffer: JIT'd code may use aligned vector loads.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t elements);
  float* data() const { return data_.get(); }
  size_t size() const { return size_; }
  // A descriptor of this buffer viewed as a row-major rows x cols matrix.
  MemRef2D AsMatrix(int64_t rows, int64_t cols) const;

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float[], Free> data_;
  size_t size_;
};

// Inputs, output and the expected output of one matmul problem.
struct MatmulOperands {
  int64_t m, n, k;
  AlignedBuffer a, b, c;
  // Reference C = A * B, accumulated in double by a plain triple loop.
  std::vector<double> want;
  // Per output element: sum over k of |a| * |b|, the scale of rounding error.
  std::vector<double> scale;
};

// Random inputs in [-1, 1] from a fixed seed, C zeroed, reference computed.
std::unique_ptr<MatmulOperands> MakeMatmulOperands(const strategies::Problem& problem);

// Largest |c - want| / (scale + tiny) over the output; `where` gets its flat index.
double MaxScaledError(const MatmulOperands& ops, int64_t* where);

// Largest acceptable MaxScaledError for `k` products accumulated in f32: a few ulps per term.
double ToleranceForF32(int64_t k);

}  // namespace mtune::worker
