// Payloads: the linalg-on-tensors MLIR function of a problem, as text.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "strategies/problem.h"

namespace mtune::strategies {

// Name of the payload function; with `llvm.emit_c_interface` it is callable as
// `_mlir_ciface_<name>(descriptor*...)`.
inline constexpr char kPayloadFunction[] = "kernel";

// The payload of `problem`: func @kernel taking one memref per operand (inputs
// first, the output last), computing on tensors and writing the output in place.
absl::StatusOr<std::string> MakePayload(const Problem& problem);

}  // namespace mtune::strategies
