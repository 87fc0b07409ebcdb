// The op families mtune knows: for each, its key grammar, operand shapes, work and
// the linalg op of its payload. Internal to strategies/ (problem.cc, payload.cc).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "strategies/problem.h"

namespace mtune::strategies::internal {

struct DimSpec {
  std::string name;
  // 0: the key must give it; otherwise the value used when the key leaves it out
  // (strides and dilations default to 1). The canonical key always prints it.
  int64_t default_value = 0;
};

struct FamilySpec {
  FamilyInfo info;
  std::vector<DimSpec> dims;
  std::vector<std::string> element_types;
  // Whether the output is read as well as written (it accumulates: C += A * B).
  bool accumulates = true;
  // Shape checks beyond "every dimension positive" (e.g. the filter fits the input).
  std::function<absl::Status(const Problem&)> validate;
  // Inputs first, output last.
  std::function<std::vector<OperandShape>(const Problem&)> operands;
  // Floating-point operations of one call (a multiply-add counts 2).
  std::function<double(const Problem&)> flops;
  // Terms accumulated into one output element (1 for data movement).
  std::function<int64_t(const Problem&)> terms_per_output;
  // The linalg op of the payload, on tensors named by `args` (inputs, then output)
  // with types `types`, producing `result`.
  std::function<std::string(const Problem&, const std::vector<std::string>& args,
                            const std::vector<std::string>& types, const std::string& result)>
      linalg_op;
};

const std::vector<FamilySpec>& FamilySpecs();
const FamilySpec* FindFamily(absl::string_view name);

// Output width of a strided, dilated window: floor((in - dilation*(k-1) - 1) / stride) + 1,
// or <= 0 when the dilated window does not fit the input.
int64_t WindowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t dilation);

}  // namespace mtune::strategies::internal
