// Problems: one kernel instance (family + static shapes + element type) and its
// canonical text key, e.g. "matmul:m=512,n=512,k=512:f32". No MLIR here.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace mtune::strategies {

// One operand of a problem's kernel: its role, shape and element type ("f32",
// "f64", "bf16").
struct OperandShape {
  std::string name;
  std::vector<int64_t> shape;
  std::string element_type;

  int64_t Elements() const;
  int ElementBytes() const;
};

// One kernel instance. `dims` keeps the family's canonical order.
struct Problem {
  std::string family;
  std::vector<std::pair<std::string, int64_t>> dims;
  std::string element_type;

  // Canonical key: family:d=v,...:type with dims in the family's order.
  std::string Key() const;
  // Value of a named dimension; -1 if the family has no such dimension. Windowed
  // families also answer the derived output extents "oh" and "ow", families with a
  // 2-D output its extents "out_rows" and "out_cols".
  int64_t Dim(absl::string_view name) const;
  // Floating-point operations of one kernel call (a fused multiply-add counts 2).
  double Flops() const;
  // Bytes that any implementation must move: inputs read once, the output written
  // (and read first when the kernel accumulates into it).
  double CompulsoryBytes() const;
  // Of those, the bytes written: the output once. The rest are read.
  double CompulsoryWrittenBytes() const;
  // Bytes of all operands together: decides which memory level bounds the roofline.
  uint64_t FootprintBytes() const;
  // The kernel's operands, inputs first, output last.
  std::vector<OperandShape> Operands() const;
  // Whether the kernel accumulates into its output (out += ...) rather than overwriting it.
  bool Accumulates() const;
  // Terms summed into one output element (k for matmul, kh*kw*c for conv, 1 for
  // copies): the scale of the rounding error a correct kernel may make.
  int64_t TermsPerOutput() const;
  // The element type arithmetic is done in ("f32" for bf16 inputs).
  std::string AccumulatorType() const;
};

// What `mtune families` prints for one op family.
struct FamilyInfo {
  std::string name;
  std::string grammar;
  std::string example;
  // Empty while the family has no strategy template yet.
  std::string default_template;
  // Templates preferred over the default where they apply (a problem of their element
  // types and shapes, a target with their CPU features), best first
  // (strategies/template_choice.h).
  std::vector<std::string> target_templates;
};

// Every supported op family.
const std::vector<FamilyInfo>& Families();

// Parses and validates a key; InvalidArgument says what is wrong and what is expected.
absl::StatusOr<Problem> ParseProblemKey(absl::string_view key);

}  // namespace mtune::strategies
