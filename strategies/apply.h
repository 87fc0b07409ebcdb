// Applying tuned strategies to a module in-process: what `mtune apply` and the
// mlir-opt pass plugin share. The strategies come as library entries (read from
// a best-strategy database by the caller: strategies/ does not link db/), are
// built into the dispatching transform library (strategies/transform_library.h)
// and run by the transform interpreter, so the result is exactly what upstream
// mlir-opt gives with the exported library.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "strategies/transform_library.h"

namespace mtune::strategies {

// What happened to one linalg op of the module.
struct OpOutcome {
  enum class Kind {
    kTuned,            // its tuned strategy was applied
    kNoEntry,          // a problem, but no tuned entry for the target
    kSharedFunction,   // tuned entry exists, but the function holds other linalg ops
    kNotAProblem,      // no op family covers it
  };
  Kind kind;
  std::string function;
  std::string op_name;
  // The problem key, or why the op has none.
  std::string key_or_reason;
};

// Target id of this machine as workers register it: "cpu:<triple>:<cpu>".
std::string HostCpuTargetId();

// Short word for a kind: "tuned", "no-entry", "shared-function", "not-a-problem".
const char* OutcomeName(OpOutcome::Kind kind);

// A library ready to apply, parsed in the payload's context.
struct PreparedLibrary {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  // Keys the library dispatches.
  std::set<std::string> keys;
};

// Builds and parses the library of `entries` for `target_id` in `context`.
absl::StatusOr<PreparedLibrary> PrepareLibrary(const std::vector<LibraryEntry>& entries,
                                               const std::string& target_id,
                                               mlir::MLIRContext* context);

// Applies `library` to `module` and reports every linalg op (in walk order, as
// found before the application). Internal error with the interpreter's
// diagnostics when a tuned strategy fails to apply: an entry that no longer
// applies is reported, never skipped.
absl::StatusOr<std::vector<OpOutcome>> ApplyLibrary(mlir::ModuleOp module,
                                                    const PreparedLibrary& library);

}  // namespace mtune::strategies
