// oneDNN and Eigen implementations of every f32 kernel family mtune tunes, on the
// operands as mtune lays them out (strategies::Problem::Operands(), row-major), one
// thread: the libraries mtune-bench-families compares each family with.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "strategies/problem.h"

namespace mtune::bench {

// A library a family's kernels are compared with; kHandWritten is no library but the
// yardstick loops of bench/handwritten_kernels.h (two families only).
enum class FamilyLibrary { kOneDnn, kEigen, kHandWritten };

inline constexpr FamilyLibrary kAllFamilyLibraries[] = {
    FamilyLibrary::kOneDnn, FamilyLibrary::kEigen, FamilyLibrary::kHandWritten};

// "onednn", "eigen" or "handwritten".
std::string_view FamilyLibraryName(FamilyLibrary library);

struct FamilyBaselineOptions {
  // oneDNN convolutions: false lets the primitive pick its weights layout ("any") and
  // reorders the constant weights once, outside any timing (how inference uses
  // oneDNN, its fastest path); true forces the problem's plain HWCF layout (hwio/wio).
  bool onednn_plain_weights = false;
};

// One prepared kernel of one library on fixed buffers: the output is overwritten
// (not accumulated into) on every Run.
class FamilyKernel {
 public:
  virtual ~FamilyKernel() = default;
  // Computes the output once, on the calling thread only.
  virtual absl::Status Run() = 0;
  // How the library computes it, e.g. "dnnl_sgemm NT" or oneDNN's implementation name.
  const std::string& description() const { return description_; }

 protected:
  std::string description_;
};

// A FamilyKernel whose Run calls `run`.
std::unique_ptr<FamilyKernel> MakeFunctionKernel(std::string description,
                                                 std::function<absl::Status()> run);

// Prepares `library`'s kernel for `problem` reading `inputs` (one pointer per input
// operand, in Operands() order and layout) and writing `output`; the buffers must
// outlive the kernel. Unimplemented when the library has no implementation of the
// family; InvalidArgument for element types other than f32, except bf16 matmuls
// (A and B bf16, C f32; oneDNN only, Unimplemented for the others). For bf16
// problems the input pointers point to bf16 data.
absl::StatusOr<std::unique_ptr<FamilyKernel>> MakeFamilyKernel(
    FamilyLibrary library, const strategies::Problem& problem,
    const std::vector<const float*>& inputs, float* output,
    const FamilyBaselineOptions& options = {});

// Whether the libraries' kernels for `problem` add into the output, as the linalg op
// and so mtune's kernel do (matmuls: beta = 1; oneDNN convolutions, depthwise too: a
// sum post-op; Eigen: +=), rather than overwrite it (the reductions' libraries
// overwrite; copy and transpose do not accumulate). The output must then start at
// zero for verification.
bool BaselineAccumulates(const strategies::Problem& problem);

}  // namespace mtune::bench
