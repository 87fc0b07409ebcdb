#include "strategies/split_pair_transposes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "strategies/register_pass_once.h"

namespace mtune::strategies {
namespace {

// A transpose [p][2][m] -> [m][p][2] of static shape on tensors.
bool IsPairTranspose(mlir::linalg::TransposeOp op) {
  if (op.getPermutation() != llvm::ArrayRef<int64_t>{2, 0, 1}) return false;
  auto input = llvm::dyn_cast<mlir::RankedTensorType>(op.getInput().getType());
  auto init = llvm::dyn_cast<mlir::RankedTensorType>(op.getInit().getType());
  return input && init && input.hasStaticShape() && input.getDimSize(1) == 2;
}

void Split(mlir::linalg::TransposeOp op) {
  mlir::OpBuilder builder(op);
  const mlir::Location loc = op.getLoc();
  auto input = llvm::cast<mlir::RankedTensorType>(op.getInput().getType());
  const int64_t p = input.getDimSize(0), m = input.getDimSize(2);
  // [p][2][m] -> [p][m][2]: two rows interleaved.
  mlir::Value interleaved_init = mlir::tensor::EmptyOp::create(
      builder, loc, llvm::ArrayRef<int64_t>{p, m, 2}, input.getElementType());
  auto interleave = mlir::linalg::TransposeOp::create(builder, loc, op.getInput(), interleaved_init,
                                                      llvm::ArrayRef<int64_t>{0, 2, 1});
  // [p][m][2] -> [m][p][2]: whole pairs transposed.
  auto pairs = mlir::linalg::TransposeOp::create(builder, loc, interleave->getResult(0),
                                                 op.getInit(), llvm::ArrayRef<int64_t>{1, 0, 2});
  op->replaceAllUsesWith(pairs->getResults());
  op.erase();
}

class SplitPairTransposesPass
    : public mlir::PassWrapper<SplitPairTransposesPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitPairTransposesPass)

  llvm::StringRef getArgument() const final { return kSplitPairTransposesPassName; }
  llvm::StringRef getDescription() const final {
    return "Split transposes of element pairs ([p][2][m] -> [m][p][2]) into an interleave and a "
           "transpose of whole pairs";
  }

  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::linalg::TransposeOp> transposes;
    getOperation()->walk([&](mlir::linalg::TransposeOp op) {
      if (IsPairTranspose(op)) transposes.push_back(op);
    });
    for (mlir::linalg::TransposeOp op : transposes) Split(op);
  }
};

}  // namespace

void RegisterSplitPairTransposesPass() { RegisterPassOnce<SplitPairTransposesPass>(); }

}  // namespace mtune::strategies
