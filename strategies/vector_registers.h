// The vector register file a target's kernels are compiled for. Templates size
// their register tiles against it: `smt.declare_fun "vector_registers"`,
// `"vector_bytes"` and `"broadcast_registers"` in a constraint (param_constraint.h)
// take its values, so that one template keeps its accumulators in registers on
// AVX-512 (32 of 64 bytes) and on AVX2 (16 of 32 bytes) alike instead of spilling on
// every step of the latter.
// No MLIR here: the coordinator sizes a job's knob spaces for its workers' targets.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mtune::strategies {

struct VectorRegisters {
  // Architectural vector registers, and the bytes of each.
  int64_t count = 32;
  int64_t bytes = 64;

  // What the built-in templates were written and measured for, and what a knob
  // space is sized for when no target is known: AVX-512.
  static constexpr VectorRegisters Avx512() { return {32, 64}; }
  int64_t TotalBytes() const { return count * bytes; }
  // Registers an FMA's broadcast operand takes (the symbol `broadcast_registers`):
  // 0 on AVX-512, whose FMAs broadcast a scalar straight from memory (EVEX embedded
  // broadcast), 1 on the other register files mtune knows (AVX2 and SSE2 broadcast
  // into a register first; NEON multiplies by a register's lane). AVX-512 is the only
  // one of them with 64-byte registers, so the register file tells.
  int64_t BroadcastRegisters() const { return bytes == 64 ? 0 : 1; }
  bool operator==(const VectorRegisters&) const = default;
};

// The register file of a CPU target given by its LLVM feature string
// ("+avx2,+avx512f,-amx-tile,..."): 32 x 64 bytes with +avx512f, 16 x 32 with +avx
// or +avx2, 16 x 16 with +sse2, 32 x 16 with +neon. InvalidArgument for a string
// that enables none of them (an empty one included): sizing tiles for a guess would
// be silent.
absl::StatusOr<VectorRegisters> VectorRegistersOf(absl::string_view llvm_features);

}  // namespace mtune::strategies
