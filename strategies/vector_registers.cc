#include "strategies/vector_registers.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace mtune::strategies {

absl::StatusOr<VectorRegisters> VectorRegistersOf(absl::string_view llvm_features) {
  std::set<absl::string_view> enabled;
  for (absl::string_view feature : absl::StrSplit(llvm_features, ',', absl::SkipEmpty()))
    if (feature.size() > 1 && feature.front() == '+') enabled.insert(feature.substr(1));
  // Widest first: an AVX-512 CPU also has AVX and SSE2.
  if (enabled.contains("avx512f")) return VectorRegisters::Avx512();
  if (enabled.contains("avx") || enabled.contains("avx2")) return VectorRegisters{16, 32};
  if (enabled.contains("neon")) return VectorRegisters{32, 16};
  if (enabled.contains("sse2")) return VectorRegisters{16, 16};
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot tell the vector registers of a target with features \"", llvm_features,
      "\": it enables none of avx512f, avx, neon, sse2"));
}

}  // namespace mtune::strategies
