// The one adapter between MLIR diagnostics/LogicalResult and absl::Status, and the
// MLIRContext set-up shared by strategies/ and worker/.
#pragma once

#include <memory>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"

namespace mtune::strategies {

// Where `op` is, for messages: "template:68:5" for a file location (templates are
// parsed under the name "template"), else MLIR's own text of the location.
std::string OpLocation(mlir::Operation* op);

// A context that knows every dialect, extension and LLVM translation mtune uses.
// Multithreading is off: a worker's compile must not spread onto the measuring core.
std::unique_ptr<mlir::MLIRContext> MakeMlirContext();

// Collects every diagnostic emitted on `context` while alive, instead of printing it.
class DiagnosticCapture {
 public:
  explicit DiagnosticCapture(mlir::MLIRContext* context);
  ~DiagnosticCapture();
  DiagnosticCapture(const DiagnosticCapture&) = delete;
  DiagnosticCapture& operator=(const DiagnosticCapture&) = delete;

  // All diagnostics so far, one per line, with locations and notes.
  const std::string& text() const { return text_; }
  // Whether any of them is an error. A transform script can go on after one: a
  // pass run by transform.apply_registered_pass inside a sequence that suppresses
  // failures reports its error and the script continues without it.
  bool has_error() const { return has_error_; }
  // A status of `code` saying `what` failed, with the captured diagnostics appended.
  absl::Status ToStatus(absl::StatusCode code, absl::string_view what) const;

 private:
  mlir::MLIRContext* context_;
  mlir::DiagnosticEngine::HandlerID handler_;
  std::string text_;
  bool has_error_ = false;
};

}  // namespace mtune::strategies
