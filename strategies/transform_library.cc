#include "strategies/transform_library.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "strategies/mlir_support.h"

namespace mtune::strategies {

std::string LibrarySymbol(const std::string& problem, const std::string& target_id) {
  std::string symbol = "mtune__" + problem + "__" + target_id;
  for (char& c : symbol)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return symbol;
}

absl::StatusOr<std::string> BuildTransformLibrary(const std::vector<LibraryEntry>& entries) {
  auto context = MakeMlirContext();
  DiagnosticCapture diagnostics(context.get());
  mlir::OpBuilder builder(context.get());
  mlir::OwningOpRef<mlir::ModuleOp> library = mlir::ModuleOp::create(builder.getUnknownLoc());
  library->getOperation()->setAttr(mlir::transform::TransformDialect::kWithNamedSequenceAttrName,
                                   builder.getUnitAttr());
  for (const LibraryEntry& entry : entries) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(entry.script, context.get(), entry.problem);
    if (!module)
      return diagnostics.ToStatus(absl::StatusCode::kDataLoss,
                                  absl::StrCat("stored script of ", entry.problem, " does not parse"));
    mlir::transform::NamedSequenceOp main;
    module->walk([&](mlir::transform::NamedSequenceOp op) {
      if (op.getSymName() == "__transform_main") main = op;
    });
    if (!main)
      return absl::DataLossError(
          absl::StrCat("stored script of ", entry.problem, " has no @__transform_main"));
    main.setSymName(LibrarySymbol(entry.problem, entry.target_id));
    main->remove();
    library->getBody()->push_back(main);
  }
  if (mlir::failed(mlir::verify(*library)))
    return diagnostics.ToStatus(absl::StatusCode::kInternal, "transform library does not verify");
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// mtune transform library: one tuned strategy per (problem, target).\n";
  for (const LibraryEntry& entry : entries)
    os << "//   @" << LibrarySymbol(entry.problem, entry.target_id) << "  " << entry.problem
       << " on " << entry.target_id << "\n";
  library->print(os);
  return text;
}

}  // namespace mtune::strategies
