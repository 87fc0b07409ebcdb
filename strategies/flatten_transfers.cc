#include "strategies/flatten_transfers.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "strategies/register_pass_once.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mtune::strategies {
namespace {

class FlattenTransfersPass
    : public mlir::PassWrapper<FlattenTransfersPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FlattenTransfersPass)

  llvm::StringRef getArgument() const final { return kFlattenTransfersPassName; }
  llvm::StringRef getDescription() const final {
    return "Rewrite n-D vector transfers over contiguous row-major memory into 1-D transfers";
  }

  // The patterns create collapse_shape views, shape casts and index arithmetic; in
  // mlir-opt (the plugin) nothing else may have loaded those dialects.
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect,
                    mlir::memref::MemRefDialect, mlir::vector::VectorDialect>();
  }

  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::vector::populateFlattenVectorTransferPatterns(patterns);
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

}  // namespace

void RegisterFlattenTransfersPass() { RegisterPassOnce<FlattenTransfersPass>(); }

}  // namespace mtune::strategies
