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
    kNotAProblem,      // no op family covers it
  };
  Kind kind;
  std::string function;
  std::string op_name;
  // The problem key, or why the op has none.
  std::string key_or_reason;
  // Tuned in a function of its own: it shared its function with other linalg
  // ops, so it was outlined into @mtune_kernel__<problem>[_N] first.
  bool outlined = false;
};

// Target id of this machine as workers register it: "cpu:<triple>:<cpu>".
std::string HostCpuTargetId();

// Short word for a kind: "tuned", "no-entry", "not-a-problem".
const char* OutcomeName(OpOutcome::Kind kind);

// A library ready to apply, parsed in the payload's context.
struct PreparedLibrary {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  // Keys the library dispatches.
  std::set<std::string> keys;
  // The entries it was built from (to find the stale ones when applying fails).
  std::vector<LibraryEntry> entries;
  std::string target_id;
};

// Builds and parses the library of `entries` for `target_id` in `context`.
absl::StatusOr<PreparedLibrary> PrepareLibrary(const std::vector<LibraryEntry>& entries,
                                               const std::string& target_id,
                                               mlir::MLIRContext* context);

// Applies `library` to `module` and reports every linalg op (in walk order, as
// found before the application). When a tuned strategy fails to apply, the
// error is FailedPrecondition and names each stale entry (one whose strategy
// no longer applies to its op) with the interpreter's diagnostics, found by
// applying each entry alone to a copy of the module: never skipped.
absl::StatusOr<std::vector<OpOutcome>> ApplyLibrary(mlir::ModuleOp module,
                                                    const PreparedLibrary& library);

}  // namespace mtune::strategies
