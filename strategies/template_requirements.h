// What a template needs of its problem and of the CPU that runs its kernels, declared
// on `@__transform_main`:
//   mtune.element_types = ["bf16"]       the problems' element types it tunes
//   mtune.cpu_features = ["avx512bf16"]  LLVM feature names the kernels' code needs
// A template without them tunes every element type and runs on any CPU of its target.
// The element types are checked when a knob space is extracted (before a job is
// queued); the CPU features where code is generated (worker/jit_kernel.cc), since
// only there is the CPU known: a kernel built from instructions the CPU lacks is no
// candidate there, and LLVM would stop the process on it rather than report an error.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mlir/IR/BuiltinOps.h"
#include "strategies/problem.h"

namespace mtune::strategies {

struct TemplateRequirements {
  // Empty: any.
  std::vector<std::string> element_types;
  // Empty: none.
  std::vector<std::string> cpu_features;
};

// Reads the two attributes; InvalidArgument when one is not a non-empty array of
// non-empty strings.
absl::StatusOr<TemplateRequirements> ReadTemplateRequirements(mlir::ModuleOp module);

// The same from a template's text (parsed in a context of its own).
absl::StatusOr<TemplateRequirements> ReadTemplateRequirements(absl::string_view template_text);

// InvalidArgument naming the template's element types when `problem`'s is not one.
absl::Status CheckElementType(const TemplateRequirements& requirements, const Problem& problem);

// The required features not enabled in `host_features`, an LLVM feature string
// ("+avx512f,+fma,-amx-int8,...").
std::vector<std::string> MissingCpuFeatures(const TemplateRequirements& requirements,
                                            absl::string_view host_features);

}  // namespace mtune::strategies
