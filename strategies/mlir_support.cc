#include "strategies/mlir_support.h"

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "strategies/amx_matmul.h"
#include "strategies/flatten_transfers.h"
#include "strategies/prefetch_reads.h"
#include "strategies/rotate_tiles.h"
#include "strategies/split_pair_transposes.h"

namespace mtune::strategies {

std::string OpLocation(mlir::Operation* op) {
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(op->getLoc()))
    return absl::StrCat(file.getFilename().str(), ":", file.getLine(), ":", file.getColumn());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getLoc();
  return text;
}

std::unique_ptr<mlir::MLIRContext> MakeMlirContext() {
  static const bool passes_registered = [] {
    // Textual pass pipelines resolve pass names through this global registry.
    mlir::registerAllPasses();
    // mtune's own passes, which templates run through transform.apply_registered_pass.
    RegisterRotateTilesPass();
    RegisterPrefetchReadsPass();
    RegisterFlattenTransfersPass();
    RegisterVnniMatmulToAmxPass();
    RegisterSplitPairTransposesPass();
    return true;
  }();
  (void)passes_registered;
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry, mlir::MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

DiagnosticCapture::DiagnosticCapture(mlir::MLIRContext* context) : context_(context) {
  handler_ = context_->getDiagEngine().registerHandler([this](mlir::Diagnostic& diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) has_error_ = true;
    llvm::raw_string_ostream os(text_);
    os << diag.getLocation() << ": " << diag << "\n";
    for (const mlir::Diagnostic& note : diag.getNotes())
      os << "  " << note.getLocation() << ": note: " << note << "\n";
    return mlir::success();
  });
}

DiagnosticCapture::~DiagnosticCapture() { context_->getDiagEngine().eraseHandler(handler_); }

absl::Status DiagnosticCapture::ToStatus(absl::StatusCode code, absl::string_view what) const {
  if (text_.empty()) return absl::Status(code, absl::StrCat(what, " (no diagnostic)"));
  return absl::Status(code, absl::StrCat(what, ":\n", text_));
}

}  // namespace mtune::strategies
