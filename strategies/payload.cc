#include "strategies/payload.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "strategies/families.h"

namespace mtune::strategies {
namespace {

std::string ShapeText(const OperandShape& o) {
  return absl::StrCat(absl::StrJoin(o.shape, "x"), "x", o.element_type);
}

}  // namespace

// Operands arrive as memrefs so that the JIT'd function is trivially callable from
// C++; `restrict` tells bufferization they do not alias, `writable` lets the
// output be updated in place.
absl::StatusOr<std::string> MakePayload(const Problem& problem) {
  const internal::FamilySpec* family = internal::FindFamily(problem.family);
  if (family == nullptr)
    return absl::UnimplementedError(
        absl::StrCat("no payload generator for op family '", problem.family, "'"));
  const std::vector<OperandShape> operands = problem.Operands();
  std::vector<std::string> params, conversions, tensors, types;
  for (size_t i = 0; i < operands.size(); ++i) {
    const bool is_output = i + 1 == operands.size();
    const std::string shape = ShapeText(operands[i]);
    const std::string memref = absl::StrCat("%arg", i);
    const std::string tensor = absl::StrCat("%t", i);
    params.push_back(absl::StrCat(memref, ": memref<", shape, ">"));
    conversions.push_back(absl::StrCat("  ", tensor, " = bufferization.to_tensor ", memref,
                                       is_output ? " restrict writable" : " restrict", " : memref<",
                                       shape, "> to tensor<", shape, ">\n"));
    tensors.push_back(tensor);
    types.push_back(absl::StrCat("tensor<", shape, ">"));
  }
  const std::string out_shape = ShapeText(operands.back());
  return absl::StrCat(
      "// mtune payload for ", problem.Key(), "\n",
      "func.func @", kPayloadFunction, "(", absl::StrJoin(params, ", "),
      ") attributes {llvm.emit_c_interface} {\n", absl::StrJoin(conversions, ""), "  ",
      family->linalg_op(problem, tensors, types, "%r"), "\n",
      "  bufferization.materialize_in_destination %r in restrict writable %arg",
      operands.size() - 1, " : (tensor<", out_shape, ">, memref<", out_shape, ">) -> ()\n",
      "  return\n}\n");
}

}  // namespace mtune::strategies
