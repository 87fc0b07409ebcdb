// Operands of any problem's kernel with deterministic random inputs, the reference
// output computed independently of any strategy (plain loops in double), and the
// memref descriptors the JIT'd kernel is called with.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strategies/problem.h"

namespace mtune::worker {

// One operand's storage: 64-byte aligned (JIT'd code may use aligned vector loads),
// elements of f32, f64 or bf16, row-major.
class TypedBuffer {
 public:
  TypedBuffer(const strategies::OperandShape& shape);
  const strategies::OperandShape& shape() const { return shape_; }
  void* data() const { return data_.get(); }
  int64_t elements() const { return elements_; }
  // Element i as a double, and set (rounded to the element type).
  double Get(int64_t i) const;
  void Set(int64_t i, double value);
  // MLIR's C-interface memref descriptor of this buffer, as 8-byte words:
  // {allocated, aligned, offset, sizes[rank], strides[rank]}.
  std::vector<int64_t> Descriptor() const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  strategies::OperandShape shape_;
  int64_t elements_;
  std::unique_ptr<void, Free> data_;
};

struct KernelOperands {
  // Inputs first, the output last, as in the payload's signature.
  std::vector<TypedBuffer> buffers;
  // Expected output, and per element the sum of |terms| (the rounding-error scale).
  std::vector<double> want;
  std::vector<double> scale;
  // Largest acceptable MaxScaledError.
  double tolerance = 0;
  bool output_accumulates = true;

  TypedBuffer& output() { return buffers.back(); }
  // Zeroes an accumulating output; fills an overwritten one with NaN so that an
  // element the kernel never writes fails verification.
  void ResetOutput();
  // Largest |out - want| / (scale + tiny) (NaN counts as infinite); `where` gets the
  // flat index of the worst element.
  double MaxScaledError(int64_t* where) const;
};

// Buffers of the same shapes and values as `buffers`, at addresses of their own.
std::vector<TypedBuffer> CopyBuffers(const std::vector<TypedBuffer>& buffers);

// Random inputs in [-1, 1] from a fixed seed (rounded to the element type), the
// reference from those rounded values, the tolerance for the problem's accumulation
// length and type.
std::unique_ptr<KernelOperands> MakeKernelOperands(const strategies::Problem& problem);

}  // namespace mtune::worker
