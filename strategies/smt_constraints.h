// Compiles upstream `transform.smt.constrain_params` ops of a template into
// ParamConstraint programs mtune evaluates (see param_constraint.h). Internal to
// strategies/: knob_space.cc uses it while extracting a knob space.
#pragma once

#include "absl/status/statusor.h"
#include "mlir/IR/Operation.h"
#include "strategies/param_constraint.h"
#include "strategies/problem.h"
#include "strategies/vector_registers.h"

namespace mtune::strategies {

// `op` must be a transform.smt.constrain_params whose operands are all results of
// transform.tune.knob ops and which yields nothing. InvalidArgument (naming the
// op and its location) for anything mtune cannot evaluate exactly. `registers`
// values the symbols vector_registers, vector_bytes and broadcast_registers.
absl::StatusOr<ParamConstraint> CompileParamConstraint(mlir::Operation* op, const Problem& problem,
                                                       const VectorRegisters& registers);

}  // namespace mtune::strategies
