#include "strategies/payload.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace mtune::strategies {
namespace {

std::string Shape(int64_t a, int64_t b, const std::string& type) {
  return absl::StrCat(a, "x", b, "x", type);
}

// Operands arrive as memrefs so that the JIT'd function is trivially callable from
// C++; `restrict` tells bufferization they do not alias, `writable` lets the
// output be updated in place.
std::string MatmulPayload(const Problem& p) {
  const std::string t = p.element_type;
  const std::string a = Shape(p.Dim("m"), p.Dim("k"), t);
  const std::string b = Shape(p.Dim("k"), p.Dim("n"), t);
  const std::string c = Shape(p.Dim("m"), p.Dim("n"), t);
  return absl::StrFormat(
      R"(// mtune payload for %1$s
func.func @%2$s(%%A: memref<%3$s>, %%B: memref<%4$s>, %%C: memref<%5$s>) attributes {llvm.emit_c_interface} {
  %%a = bufferization.to_tensor %%A restrict : memref<%3$s> to tensor<%3$s>
  %%b = bufferization.to_tensor %%B restrict : memref<%4$s> to tensor<%4$s>
  %%c = bufferization.to_tensor %%C restrict writable : memref<%5$s> to tensor<%5$s>
  %%r = linalg.matmul ins(%%a, %%b : tensor<%3$s>, tensor<%4$s>) outs(%%c : tensor<%5$s>) -> tensor<%5$s>
  bufferization.materialize_in_destination %%r in restrict writable %%C : (tensor<%5$s>, memref<%5$s>) -> ()
  return
}
)",
      p.Key(), kPayloadFunction, a, b, c);
}

}  // namespace

absl::StatusOr<std::string> MakePayload(const Problem& problem) {
  if (problem.family == "matmul") return MatmulPayload(problem);
  return absl::UnimplementedError(
      absl::StrCat("no payload generator for op family '", problem.family, "'"));
}

}  // namespace mtune::strategies
