// What a search knows of a candidate's speed before its first measurement: the
// first-principles estimate that fits its template's kernel (register_tile_estimate.h
// for register tiles of FMAs, row_sum_estimate.h for row sums, transpose_estimate.h
// for transposes). The model draws its first points from the best-rated candidates,
// and weighs a prior-trained first batch by it. No MLIR.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "strategies/candidate.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {

// Whether some estimate knows the template's kernel for this problem.
bool HasKernelEstimate(std::string_view template_name, const Problem& problem);

// The share of its roofline the candidate could reach, in (0, 1]; nullopt where no
// estimate knows the kernel or the values lack its knobs. `l2_bytes`: the target's L2
// data cache per core (its workers' calibration), 0 when unknown; only the transpose
// estimate reads it.
std::optional<double> KernelEstimate(std::string_view template_name, const Problem& problem,
                                     const KnobValues& values, const VectorRegisters& registers,
                                     int64_t l2_bytes);

}  // namespace mtune::strategies
