// From IR to problem key and back: which problem a linalg op is, and which ops
// a problem key stands for. Compilers use this instead of building keys by hand.
//
// Supported ops (static shapes; tensors or memrefs) and the keys they give:
//   linalg.matmul (default maps)               matmul:m=,n=,k=:T
//   linalg.matmul, A read as (k, m)            matmul_transpose_a:m=,n=,k=:T
//   linalg.matmul, B read as (n, k)            matmul_transpose_b:m=,n=,k=:T
//   linalg.batch_matmul (default maps)         batch_matmul:b=,m=,n=,k=:T
//   linalg.conv_1d_nwc_wcf                     conv_1d_nwc_wcf:n=,w=,c=,kw=,f=,sw=,dw=:T
//   linalg.conv_2d_nhwc_hwcf                   conv_2d_nhwc_hwcf:n=,h=,w=,c=,kh=,kw=,f=,sh=,sw=,dh=,dw=:T
//   linalg.depthwise_conv_1d_nwc_wc            depthwise_conv_1d_nwc_wc:n=,w=,c=,kw=,sw=,dw=:T
//   linalg.depthwise_conv_2d_nhwc_hwc          depthwise_conv_2d_nhwc_hwc:n=,h=,w=,c=,kh=,kw=,sh=,sw=,dh=,dw=:T
//   linalg.transpose, 2-D, permutation [1, 0]  transpose_2d:m=,n=:T
//   linalg.reduce of a 2-D sum over dim 1 / 0  reduce_rows_2d:m=,n=:T / reduce_cols_2d:m=,n=:T
//   linalg.copy, 2-D                           copy_2d:m=,n=:T
// T: f32 everywhere; f64 for matmul (and transposed forms), batch_matmul and the
// non-depthwise convolutions; bf16 (bf16 inputs, f32 output) for matmul and its
// transposed forms. Keys are canonical: ParseProblemKey(key).Key() == key.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mlir/IR/Operation.h"

namespace mtune::strategies {

// The problem key of `op`. Unimplemented (saying why) for ops that are no
// problem family: other ops, dynamic shapes, unsupported element types,
// transposed or broadcast forms without a family, reductions that are not sums.
absl::StatusOr<std::string> ProblemKeyForOp(mlir::Operation* op);

// What an op of a problem looks like on tensors, as MLIR text: enough for
// `transform.structured.match ops{[op_name]} attributes {attributes}
// filter_operand_types = [operand_types]` to select exactly the ops whose
// ProblemKeyForOp is the key.
struct OpPattern {
  std::string op_name;
  // Attribute dictionary body ("indexing_maps = [...]"), or empty.
  std::string attributes;
  // Operand types in operand order (inputs, then inits).
  std::vector<std::string> operand_types;
};

// The pattern of a key this file can derive; InvalidArgument for a malformed
// key or an unknown family.
absl::StatusOr<OpPattern> OpPatternForKey(absl::string_view key);

}  // namespace mtune::strategies
