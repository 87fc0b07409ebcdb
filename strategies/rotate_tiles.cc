#include "strategies/rotate_tiles.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "strategies/register_pass_once.h"

namespace mtune::strategies {
namespace {

// Records the ops a builder inserts.
struct Recorder : mlir::OpBuilder::Listener {
  void notifyOperationInserted(mlir::Operation* op, mlir::OpBuilder::InsertPoint) override { ops.insert(op); }
  llvm::SmallPtrSet<mlir::Operation*, 8> ops;
};

// Why: a transpose whose input rows are a power of two bytes apart (256x512 f32:
// 2 KiB) reads each 16x16 tile's 16 lines from the same two L1 sets, and a tile
// loop walking down a column of tiles keeps hitting those sets; walking along a
// row of tiles does the same to the output's lines. Rotating the outer tile index
// by the inner one makes consecutive tiles differ in both.
class RotateTilesPass : public mlir::PassWrapper<RotateTilesPass, mlir::OperationPass<>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RotateTilesPass)

  llvm::StringRef getArgument() const final { return kRotateTilesPassName; }
  llvm::StringRef getDescription() const final {
    return "Visit the tiles of each scf.for marked mtune.rotatable_tiles and of the loops "
           "directly in its body in rotated (diagonal) order";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<mlir::arith::ArithDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> outer_loops;
    getOperation()->walk([&](mlir::scf::ForOp loop) {
      if (loop->hasAttr(kRotatableTilesAttr)) outer_loops.push_back(loop);
    });
    bool failed = false;
    for (mlir::scf::ForOp outer : outer_loops) {
      outer->removeAttr(kRotatableTilesAttr);
      llvm::SmallVector<mlir::scf::ForOp> inner_loops(outer.getBody()->getOps<mlir::scf::ForOp>());
      if (mlir::failed(Rotate(outer, inner_loops))) failed = true;
    }
    if (failed) signalPassFailure();
  }

 private:
  static bool InsideBody(mlir::scf::ForOp loop, mlir::Operation* op) {
    return loop.getRegion().isAncestor(op->getParentRegion());
  }

  // Whether `user` (outside the inner loops' bodies) and the inner loops exchange
  // values: what it computes reaches an inner loop (its bounds or its body), or an
  // inner loop's results reach it.
  static bool MixesWithInnerLoops(mlir::Operation* user, llvm::ArrayRef<mlir::scf::ForOp> inner_loops) {
    llvm::SetVector<mlir::Operation*> reached;
    mlir::getForwardSlice(user, &reached);
    for (mlir::scf::ForOp inner : inner_loops) {
      if (user == inner.getOperation()) return true;
      for (mlir::Operation* op : reached)
        if (op == inner.getOperation() || inner->isAncestor(op)) return true;
      llvm::SetVector<mlir::Operation*> from_inner;
      mlir::getForwardSlice(inner.getOperation(), &from_inner);
      if (from_inner.contains(user)) return true;
    }
    return false;
  }

  // A use of the outer induction variable outside the inner loops' bodies is left
  // unrotated when it exchanges no value with them: a tile of its own, such as the
  // last partial column tile that peeling leaves after the column loop (the tiles
  // are independent, so its row is still visited exactly once). One that does (an
  // inner loop's bounds, or a value the inner loops read) would mix rotated and
  // unrotated rows: an error.
  static mlir::LogicalResult Rotate(mlir::scf::ForOp outer, llvm::ArrayRef<mlir::scf::ForOp> inner_loops) {
    if (inner_loops.empty()) return mlir::success();  // one inner tile: nothing to rotate by
    mlir::Value iv = outer.getInductionVar();
    for (mlir::OpOperand& use : iv.getUses()) {
      bool inside = false;
      for (mlir::scf::ForOp inner : inner_loops) inside |= InsideBody(inner, use.getOwner());
      if (!inside && MixesWithInnerLoops(use.getOwner(), inner_loops))
        return use.getOwner()->emitError(
            "mtune-rotate-tiles: uses the rotated loop's induction variable outside its inner tile "
            "loops, in values they exchange with them");
    }
    for (mlir::scf::ForOp inner : inner_loops) {
      if (!iv.getType().isIndex() || !inner.getInductionVar().getType().isIndex())
        return inner.emitError("mtune-rotate-tiles: needs index-typed loops");
      // The index arithmetic is folded as it is built (constant bounds leave a
      // divide, an add, a remainder and a multiply); what it creates reads the old
      // induction variable and keeps doing so.
      Recorder created;
      mlir::OpBuilder b = mlir::OpBuilder::atBlockBegin(inner.getBody(), &created);
      const mlir::Location loc = inner.getLoc();
      using namespace mlir::arith;
      mlir::Value lb = outer.getLowerBound(), ub = outer.getUpperBound(), step = outer.getStep();
      mlir::Value trips = b.createOrFold<CeilDivSIOp>(loc, b.createOrFold<SubIOp>(loc, ub, lb), step);
      mlir::Value q = b.createOrFold<DivUIOp>(loc, b.createOrFold<SubIOp>(loc, iv, lb), step);
      mlir::Value k = b.createOrFold<DivUIOp>(
          loc, b.createOrFold<SubIOp>(loc, inner.getInductionVar(), inner.getLowerBound()), inner.getStep());
      mlir::Value rotated = b.createOrFold<RemUIOp>(loc, b.createOrFold<AddIOp>(loc, q, k), trips);
      mlir::Value new_iv = b.createOrFold<AddIOp>(loc, lb, b.createOrFold<MulIOp>(loc, rotated, step));
      iv.replaceUsesWithIf(new_iv, [&](mlir::OpOperand& use) {
        return !created.ops.contains(use.getOwner()) && InsideBody(inner, use.getOwner());
      });
    }
    return mlir::success();
  }
};

}  // namespace

void RegisterRotateTilesPass() { RegisterPassOnce<RotateTilesPass>(); }

}  // namespace mtune::strategies
