// Reference outputs: each family's definition as plain loops in double, written
// independently of any strategy or of MLIR.
#pragma once

#include "strategies/problem.h"
#include "worker/kernel_operands.h"

namespace mtune::worker {

// Fills ops.want and ops.scale (sum of |terms| per output element) from the inputs
// in ops.buffers. For accumulating families the output starts from zero.
void ComputeReference(const strategies::Problem& problem, KernelOperands& ops);

}  // namespace mtune::worker
