#include "strategies/template_policy.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/SymbolTable.h"
#include "strategies/amx_matmul.h"
#include "strategies/mlir_support.h"
#include "strategies/flatten_transfers.h"
#include "strategies/prefetch_reads.h"
#include "strategies/rotate_tiles.h"
#include "strategies/split_pair_transposes.h"

namespace mtune::strategies {
namespace {

bool AllowedDialect(llvm::StringRef dialect) {
  return dialect == "builtin" || dialect == "transform";
}

// SMT ops are constraint formulas: allowed only in a constrain_params body,
// which mtune evaluates itself (strategies/smt_constraints.h).
bool InsideParamConstraint(mlir::Operation* op) {
  for (mlir::Operation* parent = op->getParentOp(); parent; parent = parent->getParentOp())
    if (parent->getName().getStringRef() == "transform.smt.constrain_params") return true;
  return false;
}

// Transform ops that act beyond the payload IR (files, output, arbitrary passes).
// The passes allowed are mtune's own, without options: `mtune-rotate-tiles` only
// rewrites loop indices, `mtune-flatten-transfers` only reshapes vector transfers,
// `mtune-vnni-matmul-to-amx` only rewrites packed bf16 matmuls into AMX tile ops,
// `mtune-split-pair-transposes` only splits a transpose into two,
// `mtune-prefetch-reads` only adds prefetches of addresses loops already read, of
// the op they are applied to.
bool DeniedTransformOp(mlir::Operation* op) {
  if (auto pass = llvm::dyn_cast<mlir::transform::ApplyRegisteredPassOp>(op))
    return (pass.getPassName() != kRotateTilesPassName &&
            pass.getPassName() != kFlattenTransfersPassName &&
            pass.getPassName() != kVnniMatmulToAmxPassName &&
            pass.getPassName() != kSplitPairTransposesPassName &&
            pass.getPassName() != kPrefetchReadsPassName) ||
           !pass.getOptions().empty() || !pass.getDynamicOptions().empty();
  return op->getName().getStringRef() == "transform.print";
}

absl::Status Reject(mlir::Operation* op, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("template rejected: op '",
                                                 op->getName().getStringRef().str(), "' at ",
                                                 OpLocation(op), " ", why));
}

}  // namespace

absl::Status CheckTemplateText(absl::string_view text) {
  if (text.size() > kMaxTemplateBytes)
    return absl::InvalidArgumentError(absl::StrCat("template of ", text.size(),
                                                   " bytes is larger than the limit of ",
                                                   kMaxTemplateBytes, " bytes"));
  // Brackets inside string literals and // comments do not nest anything.
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == absl::string_view::npos) break;
    } else if (c == '(' || c == '[' || c == '{') {
      if (++depth > kMaxTemplateNesting)
        return absl::InvalidArgumentError(absl::StrCat(
            "template nests brackets more than ", kMaxTemplateNesting, " deep (at byte ", i,
            "); templates are transform scripts, nested about 10 deep"));
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTemplatePolicy(mlir::ModuleOp module) {
  absl::Status status;
  // Outer ops first, so that the error names the op that was written, not
  // something nested in it.
  module->walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation* op) {
    const llvm::StringRef dialect = op->getName().getDialectNamespace();
    if (dialect == "smt" && !InsideParamConstraint(op)) {
      status = Reject(op, "is an SMT op outside transform.smt.constrain_params");
      return mlir::WalkResult::interrupt();
    }
    if (!AllowedDialect(dialect) && dialect != "smt") {
      status = Reject(op, absl::StrCat("is outside the allowed dialects (builtin, transform, "
                                       "and smt inside transform.smt.constrain_params): "
                                       "templates may only hold transform-dialect scripts"));
      return mlir::WalkResult::interrupt();
    }
    if (DeniedTransformOp(op)) {
      status = Reject(op, "reaches beyond the payload (passes, files or output) and is not "
                          "allowed in templates");
      return mlir::WalkResult::interrupt();
    }
    if (auto sequence = llvm::dyn_cast<mlir::transform::NamedSequenceOp>(op);
        sequence && sequence.isExternal()) {
      status = Reject(op, absl::StrCat("declares @", sequence.getSymName().str(),
                                       " without a body, which would be resolved from an "
                                       "external transform library"));
      return mlir::WalkResult::interrupt();
    }
    // Attributes that are not the same each time the template is parsed. Resource
    // blobs are named per context, and a name already taken gets a suffix: parsed
    // twice in one process, `dense_resource<w>` reads back as `dense_resource<w_1>`,
    // so a knob option holding one was no longer among its own options when
    // instantiated. A `distinct` attribute is a new one (never freed) on every
    // parse, and unlike ones print alike. A transform script has no use for either.
    op->getAttrDictionary().walk([&](mlir::Attribute attr) {
      if (!status.ok()) return;
      if (llvm::isa<mlir::DenseResourceElementsAttr>(attr))
        status = Reject(op, "holds a dense_resource attribute, whose name changes each time "
                            "the template is parsed");
      else if (llvm::isa<mlir::DistinctAttr>(attr))
        status = Reject(op, "holds a distinct attribute, which is a new attribute each time "
                            "the template is parsed");
    });
    if (!status.ok()) return mlir::WalkResult::interrupt();
    // Every symbol referred to must be a sequence defined in this template.
    op->getAttrDictionary().walk([&](mlir::SymbolRefAttr ref) {
      if (!status.ok()) return;
      auto target = llvm::dyn_cast_or_null<mlir::transform::NamedSequenceOp>(
          mlir::SymbolTable::lookupNearestSymbolFrom(op, ref));
      if (!target || target.isExternal()) {
        std::string name;
        llvm::raw_string_ostream os(name);
        os << ref;
        status = Reject(op, absl::StrCat("refers to ", name,
                                         ", which is not a sequence defined in the template"));
      }
    });
    return status.ok() ? mlir::WalkResult::advance() : mlir::WalkResult::interrupt();
  });
  return status;
}

}  // namespace mtune::strategies
