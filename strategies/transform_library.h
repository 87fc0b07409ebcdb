// The exported transform library: one named sequence per tuned (problem, target).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mtune::strategies {

// One resolved strategy to put in the library.
struct LibraryEntry {
  std::string problem;
  std::string target_id;
  // Instantiated template text (every knob selected) with @__transform_main.
  std::string script;
};

// Symbol of an entry's sequence: "mtune__" + problem and target with every
// character outside [A-Za-z0-9_] replaced by '_', e.g. mtune__matmul_m_512_....
std::string LibrarySymbol(const std::string& problem, const std::string& target_id);

// One module (transform.with_named_sequence) holding each entry's entry point
// renamed to LibrarySymbol; apply one with
//   mlir-opt --transform-preload-library=transform-library-paths=LIB.mlir
//            --transform-interpreter=entry-point=SYMBOL payload.mlir
absl::StatusOr<std::string> BuildTransformLibrary(const std::vector<LibraryEntry>& entries);

}  // namespace mtune::strategies
