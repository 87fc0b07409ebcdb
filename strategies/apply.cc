#include "strategies/apply.h"

#include <map>

#include "absl/strings/str_cat.h"
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
    case OpOutcome::Kind::kSharedFunction:
      return "shared-function";
    case OpOutcome::Kind::kNotAProblem:
      return "not-a-problem";
  }
  return "?";
}

absl::StatusOr<PreparedLibrary> PrepareLibrary(const std::vector<LibraryEntry>& entries,
                                               const std::string& target_id,
                                               mlir::MLIRContext* context) {
  PreparedLibrary prepared;
  std::vector<LibraryEntry> of_target;
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
        else if (ops.size() > 1)
          outcome.kind = OpOutcome::Kind::kSharedFunction;
      }
      outcomes.push_back(std::move(outcome));
    }
  });

  mlir::MLIRContext* context = module.getContext();
  DiagnosticCapture diagnostics(context);
  mlir::Operation* entry = mlir::transform::detail::findTransformEntryPoint(
      module, *library.module,
      mlir::transform::TransformDialect::kTransformEntryPointSymbolName);
  if (entry == nullptr)
    return absl::InternalError("the transform library has no @__transform_main");
  if (mlir::failed(mlir::transform::applyTransformNamedSequence(
          module.getOperation(), entry, *library.module, mlir::transform::TransformOptions())))
    return diagnostics.ToStatus(
        absl::StatusCode::kInternal,
        "applying the tuned strategies failed (an entry that no longer applies is stale: "
        "re-tune it)");
  return outcomes;
}

}  // namespace mtune::strategies
