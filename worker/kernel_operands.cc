#include "worker/kernel_operands.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>

#include "worker/reference.h"

namespace mtune::worker {
namespace {

// bf16 is the upper half of an f32; round to nearest even.
uint16_t ToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float FromBf16(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// Bits of one unit in the last place, relative, of the type sums are done in.
double UnitRoundoff(const std::string& accumulator_type) {
  return accumulator_type == "f64" ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}

}  // namespace

void TypedBuffer::Free::operator()(void* p) const { std::free(p); }

TypedBuffer::TypedBuffer(const strategies::OperandShape& shape)
    : shape_(shape), elements_(shape.Elements()) {
  size_t bytes = ((static_cast<size_t>(elements_) * shape.ElementBytes() + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  data_.reset(p);
}

double TypedBuffer::Get(int64_t i) const {
  if (shape_.element_type == "f64") return static_cast<const double*>(data())[i];
  if (shape_.element_type == "bf16") return FromBf16(static_cast<const uint16_t*>(data())[i]);
  return static_cast<const float*>(data())[i];
}

void TypedBuffer::Set(int64_t i, double value) {
  if (shape_.element_type == "f64") {
    static_cast<double*>(data())[i] = value;
  } else if (shape_.element_type == "bf16") {
    static_cast<uint16_t*>(data())[i] = ToBf16(static_cast<float>(value));
  } else {
    static_cast<float*>(data())[i] = static_cast<float>(value);
  }
}

std::vector<int64_t> TypedBuffer::Descriptor() const {
  const std::vector<int64_t>& sizes = shape_.shape;
  std::vector<int64_t> words = {reinterpret_cast<int64_t>(data()),
                                reinterpret_cast<int64_t>(data()), 0};
  words.insert(words.end(), sizes.begin(), sizes.end());
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int i = static_cast<int>(sizes.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * sizes[i + 1];
  words.insert(words.end(), strides.begin(), strides.end());
  return words;
}

std::vector<TypedBuffer> CopyBuffers(const std::vector<TypedBuffer>& buffers) {
  std::vector<TypedBuffer> copies;
  copies.reserve(buffers.size());
  for (const TypedBuffer& buffer : buffers) {
    copies.emplace_back(buffer.shape());
    std::memcpy(copies.back().data(), buffer.data(),
                static_cast<size_t>(buffer.elements()) * buffer.shape().ElementBytes());
  }
  return copies;
}

void KernelOperands::ResetOutput() {
  TypedBuffer& out = buffers.back();
  const double fill = output_accumulates ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < out.elements(); ++i) out.Set(i, fill);
}

double KernelOperands::MaxScaledError(int64_t* where) const {
  const TypedBuffer& out = buffers.back();
  double worst = 0;
  *where = -1;
  for (int64_t i = 0; i < out.elements(); ++i) {
    const double err = std::fabs(out.Get(i) - want[i]) / (scale[i] + 1e-30);
    if (!(err <= worst)) {  // also catches NaN
      worst = std::isnan(err) ? INFINITY : err;
      *where = i;
      if (std::isinf(worst)) break;
    }
  }
  return worst;
}

std::unique_ptr<KernelOperands> MakeKernelOperands(const strategies::Problem& problem) {
  auto ops = std::make_unique<KernelOperands>();
  for (const strategies::OperandShape& shape : problem.Operands()) ops->buffers.emplace_back(shape);
  ops->output_accumulates = problem.Accumulates();
  std::mt19937 rng(20261122);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t b = 0; b + 1 < ops->buffers.size(); ++b) {
    TypedBuffer& in = ops->buffers[b];
    for (int64_t i = 0; i < in.elements(); ++i) in.Set(i, dist(rng));
  }
  ComputeReference(problem, *ops);
  // Worst-case recursive summation error is about terms * u of the scale; any
  // summation order a strategy picks stays below that. Allow a factor of 4.
  ops->tolerance = 4.0 * static_cast<double>(problem.TermsPerOutput() + 1) *
                   UnitRoundoff(problem.AccumulatorType());
  return ops;
}

}  // namespace mtune::worker
