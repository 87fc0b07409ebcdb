#include "strategies/apply.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/TargetParser/Host.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Parser/Parser.h"
#include "strategies/mlir_support.h"
#include "strategies/op_key.h"

namespace mtune::strategies {
namespace {

// Runs the library's @__transform_main on `module`, diagnostics in the status.
absl::Status RunEntryPoint(mlir::ModuleOp module, mlir::ModuleOp library) {
  DiagnosticCapture diagnostics(module.getContext());
  mlir::Operation* entry = mlir::transform::detail::findTransformEntryPoint(
      module, library, mlir::transform::TransformDialect::kTransformEntryPointSymbolName);
  if (entry == nullptr)
    return absl::InternalError("the transform library has no @__transform_main");
  if (mlir::failed(mlir::transform::applyTransformNamedSequence(
          module.getOperation(), entry, library, mlir::transform::TransformOptions())))
    return diagnostics.ToStatus(absl::StatusCode::kInternal,
                                "applying the tuned strategies failed");
  // As in the worker: an error the script went on after is a failure too.
  if (diagnostics.has_error())
    return diagnostics.ToStatus(absl::StatusCode::kInternal,
                                "a tuned strategy reported an error while applying");
  return absl::OkStatus();
}

}  // namespace

std::string HostCpuTargetId() {
  return absl::StrCat("cpu:", llvm::sys::getProcessTriple(), ":",
                      llvm::sys::getHostCPUName().str());
}

const char* OutcomeName(OpOutcome::Kind kind) {
  switch (kind) {
    case OpOutcome::Kind::kTuned:
      return "tuned";
    case OpOutcome::Kind::kNoEntry:
      return "no-entry";
    case OpOutcome::Kind::kNotAProblem:
      return "not-a-problem";
  }
  return "?";
}

absl::StatusOr<PreparedLibrary> PrepareLibrary(const std::vector<LibraryEntry>& entries,
                                               const std::string& target_id,
                                               mlir::MLIRContext* context) {
  PreparedLibrary prepared;
  prepared.target_id = target_id;
  std::vector<LibraryEntry>& of_target = prepared.entries;
  for (const LibraryEntry& entry : entries) {
    if (entry.target_id != target_id) continue;
    of_target.push_back(entry);
    if (OpPatternForKey(entry.problem).ok()) prepared.keys.insert(entry.problem);
  }
  absl::StatusOr<std::string> text = BuildTransformLibrary(of_target, target_id, context);
  if (!text.ok()) return text.status();
  DiagnosticCapture diagnostics(context);
  prepared.module = mlir::parseSourceString<mlir::ModuleOp>(*text, context, "mtune library");
  if (!prepared.module)
    return diagnostics.ToStatus(absl::StatusCode::kInternal, "the transform library does not parse");
  return prepared;
}

absl::StatusOr<std::vector<OpOutcome>> ApplyLibrary(mlir::ModuleOp module,
                                                    const PreparedLibrary& library) {
  std::vector<OpOutcome> outcomes;
  module.walk([&](mlir::func::FuncOp function) {
    std::vector<mlir::Operation*> ops;
    function.walk([&](mlir::linalg::LinalgOp op) { ops.push_back(op); });
    for (mlir::Operation* op : ops) {
      OpOutcome outcome{OpOutcome::Kind::kTuned, function.getSymName().str(),
                        op->getName().getStringRef().str(), ""};
      absl::StatusOr<std::string> key = ProblemKeyForOp(op);
      if (!key.ok()) {
        outcome.kind = OpOutcome::Kind::kNotAProblem;
        outcome.key_or_reason = std::string(key.status().message());
      } else {
        outcome.key_or_reason = *key;
        // The library dispatches tensor-form ops only (strategies bufferize).
        const bool on_tensors = mlir::isa<mlir::RankedTensorType>(op->getOperand(0).getType());
        if (!library.keys.count(*key) || !on_tensors)
          outcome.kind = OpOutcome::Kind::kNoEntry;
        else
          outcome.outlined = ops.size() > 1;
      }
      outcomes.push_back(std::move(outcome));
    }
  });

  // A pristine copy to find the stale entries with, should applying fail.
  mlir::OwningOpRef<mlir::ModuleOp> pristine(module.clone());
  absl::Status applied = RunEntryPoint(module, *library.module);
  if (applied.ok()) return outcomes;

  std::set<std::string> tuned_keys;
  for (const OpOutcome& o : outcomes)
    if (o.kind == OpOutcome::Kind::kTuned) tuned_keys.insert(o.key_or_reason);
  std::vector<std::string> stale;
  for (const LibraryEntry& entry : library.entries) {
    if (!tuned_keys.count(entry.problem)) continue;
    absl::StatusOr<PreparedLibrary> alone =
        PrepareLibrary({entry}, library.target_id, module.getContext());
    absl::Status status = alone.status();
    if (status.ok()) {
      mlir::OwningOpRef<mlir::ModuleOp> copy(pristine->clone());
      status = RunEntryPoint(*copy, *alone->module);
    }
    if (!status.ok())
      stale.push_back(absl::StrCat(entry.problem, " on ", entry.target_id, ": ", status.message()));
  }
  if (stale.empty()) return applied;  // each applies alone: not an entry's fault
  return absl::FailedPreconditionError(absl::StrCat(
      "stale entr", stale.size() == 1 ? "y" : "ies",
      " (the stored strategy no longer applies to its op; re-tune it): ",
      absl::StrJoin(stale, "; ")));
}

}  // namespace mtune::strategies
